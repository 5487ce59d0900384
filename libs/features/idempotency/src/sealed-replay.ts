import { SetMetadata } from '@nestjs/common';
import { conflict } from '@mango/domain-kernel';
import { Keyring, KeyringError, openStored, SealedJson, sealJson } from '@mango/platform-secrets';
import type { IdempotencyScope } from '@mango/persistence';

export const SEALED_REPLAY = 'mango:idempotency-sealed-replay';

/**
 * Marks a POST whose response carries a secret shown once (a webhook's signing secret on create and on
 * rotation): the response kept for its `Idempotency-Key` replay is sealed with the keyring, never stored
 * in clear (docs/api-guide.md, "Idempotent requests").
 */
export const SealedReplay = () => SetMetadata(SEALED_REPLAY, true);

/** How a sealed response sits in `idempotency_keys.response_body`. */
interface SealedResponse {
  mango_sealed_response: SealedJson;
}

/** Binds the sealed response to the key it answers, so a row copied under another key does not open. */
const binding = (scope: IdempotencyScope) =>
  `idempotency-response\0${scope.workspaceId}\0${scope.credentialKind}\0${scope.key}`;

/**
 * What is stored for a sealed-replay route's response: the response sealed with the keyring, or nothing
 * (null) without a keyring; such routes refuse to work without one anyway.
 */
export function sealResponse(keyring: Keyring | null, scope: IdempotencyScope, body: unknown): unknown {
  if (!keyring) return null;
  const sealed: SealedResponse = {
    mango_sealed_response: sealJson(keyring, JSON.stringify(body ?? null), binding(scope)),
  };
  return sealed;
}

/** The response to replay from what `sealResponse` stored; 409 when the keyring can no longer open it. */
export function openResponse(keyring: Keyring | null, scope: IdempotencyScope, stored: unknown): unknown {
  const sealed = (stored as Partial<SealedResponse> | null)?.mango_sealed_response;
  if (!sealed) return stored;
  try {
    if (!keyring) throw new KeyringError('no keyring');
    return JSON.parse(openStored(keyring, sealed, binding(scope), 'none')) as unknown;
  } catch (e) {
    if (!(e instanceof KeyringError)) throw e;
    throw conflict(
      'the first response to this Idempotency-Key holds a secret sealed with a key the keyring no longer has, so it cannot be replayed; send the request again with a new key',
      { error_code: 'idempotency_response_unavailable' },
    );
  }
}
