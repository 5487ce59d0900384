/**
 * What each sealed value is bound to (the AEAD associated data of envelope.ts): the record and the field
 * it was sealed for, so a sealed value copied to another row or field does not open.
 */

/**
 * A Vault credential's secrets (`vault_credentials.secret_ciphertext`, the row's one sealed field: one JSON
 * document). This is the binding Vault credentials have been sealed with from the start, kept as it is so
 * every stored credential still opens.
 */
export const vaultCredentialBinding = (credentialId: string): string => `vault_credential:${credentialId}`;

/** One signing secret of a webhook endpoint (an element of `webhooks.secrets`). */
export const webhookSecretBinding = (webhookId: string): string => `webhook:${webhookId}:signing_secret`;
