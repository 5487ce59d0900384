import { DomainError, ErrorCode } from '@mango/domain-kernel';

/**
 * Why `mango backup` or `mango restore` refuses or stops: a message for the operator (never key material,
 * a passphrase or a database password), exit code 1. `InvalidRequest` for what the operator gave (options,
 * an archive that does not open or verify), `Conflict` for a target that is not empty.
 */
export const backupRefused = (message: string) => new DomainError(ErrorCode.InvalidRequest, message);
export const targetNotEmpty = (message: string) => new DomainError(ErrorCode.Conflict, message);
