import { SetMetadata } from '@nestjs/common';

export const IDEMPOTENT_BY_PROTOCOL = 'mango:idempotent-by-protocol';

/**
 * Marks a POST whose repeat is already safe by its own protocol (the Work lease transitions: a repeated
 * Ack is idempotent, a heartbeat is conditional on the previous one, an identical result or failure is
 * answered with the stored one): the `Idempotency-Key` header is ignored there, so these hot routes keep
 * their single short transaction and store no key (docs/api-guide.md, "Idempotent requests").
 */
export const IdempotentByProtocol = () => SetMetadata(IDEMPOTENT_BY_PROTOCOL, true);
