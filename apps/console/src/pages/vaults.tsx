import { useClient } from '../api';
import { useLoad, when } from '../hooks';
import { ListBody, metadataText, Toggle } from './parts';

/** Vaults and their credentials. Secrets are write-only in the API; the page renders only the named fields below. */
export function VaultsPage() {
  const client = useClient();
  const vaults = useLoad(
    () => client.vaults.list({ limit: 100, include_archived: true } as never) as Promise<{ data: any[] }>,
    [client],
  );
  return (
    <section>
      <h1>Vaults</h1>
      <ListBody loaded={vaults} empty="No Vaults yet.">
        {(items: any[]) =>
          items.map((v) => (
            <article class="card" key={v.id} data-testid="vault">
              <h2>
                {v.display_name} <span class="mono dim">{v.id}</span>{' '}
                {v.archived_at && <span class="dim">archived</span>}
              </h2>
              <p class="dim">
                metadata {metadataText(v.metadata)} · updated {when(v.updated_at)}
              </p>
              <Toggle label="Credentials">{() => <Credentials vaultId={v.id} />}</Toggle>
            </article>
          ))
        }
      </ListBody>
    </section>
  );
}

function Credentials({ vaultId }: { vaultId: string }) {
  const client = useClient();
  const creds = useLoad(
    () =>
      client.vaults.credentials.list(vaultId, { limit: 100, include_archived: true } as never) as Promise<{
        data: any[];
      }>,
    [client, vaultId],
  );
  return (
    <ListBody loaded={creds} empty="No credentials in this Vault.">
      {(items: any[]) => (
        <table class="list" data-testid="credentials">
          <thead>
            <tr>
              <th>Credential</th>
              <th>Name</th>
              <th>Auth</th>
              <th>MCP server</th>
              <th>Details</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {items.map((c) => (
              <tr key={c.id}>
                <td class="mono">{c.id}</td>
                <td>
                  {c.display_name ?? '—'} {c.archived_at && <span class="dim">archived</span>}
                </td>
                <td>{c.auth?.type}</td>
                <td class="mono">{c.auth?.mcp_server_url}</td>
                <td>{authDetails(c.auth)}</td>
                <td>{when(c.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListBody>
  );
}

/** Only non-secret, named fields (never a token, refresh token or client secret, whatever the API sends). */
function authDetails(auth: any): string {
  if (!auth || auth.type !== 'mcp_oauth') return 'token stored (write-only)';
  const parts = [`expires ${when(auth.expires_at)}`];
  const r = auth.refresh;
  if (r) {
    parts.push(`refresh via ${r.token_endpoint ?? '—'}`);
    if (r.client_id) parts.push(`client ${r.client_id}`);
    if (r.token_endpoint_auth?.type) parts.push(`auth ${r.token_endpoint_auth.type}`);
    if (r.scope) parts.push(`scope ${r.scope}`);
  }
  return parts.join(' · ');
}
