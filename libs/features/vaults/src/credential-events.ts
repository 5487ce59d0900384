/**
 * A credential's webhook event (`vault_credential.*`): `data.id` is the credential, `data.vault_id` its
 * Vault (docs/api-guide.md, Webhooks).
 */
export function credentialEvent(type: string, vaultId: string, credentialId: string) {
  return { type, id: credentialId, extra: { vault_id: vaultId } };
}
