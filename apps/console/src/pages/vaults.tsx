import { useClient } from '../api';
import { useLoad, useWrite, when } from '../hooks';
import { Action, Failure, ListBody, metadataText, Toggle } from './parts';

/**
 * Vaults and their credentials: create a Vault, add a `static_bearer` credential, archive either. Secrets
 * are write-only in the API; the page renders only the named fields below, and a token typed into the form
 * goes to the API once and is cleared from the form (it is kept in no state or storage).
 */
export function VaultsPage() {
  const client = useClient();
  const vaults = useLoad(
    () => client.vaults.list({ limit: 100, include_archived: true } as never) as Promise<{ data: any[] }>,
    [client],
  );
  return (
    <section>
      <h1>Vaults</h1>
      <CreateVault done={vaults.reload} />
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
              {!v.archived_at && (
                <p>
                  <Action
                    label="Archive"
                    testid="archive-vault"
                    confirm={`Archive the Vault ${v.display_name}? Its credentials are archived with it and stop being used.`}
                    run={() => client.vaults.archive(v.id)}
                    done={vaults.reload}
                  />
                </p>
              )}
              <Toggle label="Credentials">
                {() => <Credentials vaultId={v.id} archived={!!v.archived_at} />}
              </Toggle>
            </article>
          ))
        }
      </ListBody>
    </section>
  );
}

function Credentials({ vaultId, archived }: { vaultId: string; archived: boolean }) {
  const client = useClient();
  const creds = useLoad(
    () =>
      client.vaults.credentials.list(vaultId, { limit: 100, include_archived: true } as never) as Promise<{
        data: any[];
      }>,
    [client, vaultId],
  );
  return (
    <>
      {!archived && <AddBearerCredential vaultId={vaultId} done={creds.reload} />}
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
                <th />
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
                  <td>
                    {!c.archived_at && (
                      <Action
                        label="Archive"
                        testid="archive-credential"
                        confirm="Archive this credential? Sessions stop using it; its secret is erased."
                        run={() => client.vaults.credentials.archive(vaultId, c.id)}
                        done={creds.reload}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListBody>
    </>
  );
}

/** A new Vault: its display name. */
function CreateVault({ done }: { done: () => void }) {
  const client = useClient();
  const { busy, error, run } = useWrite();
  const submit = async (form: HTMLFormElement) => {
    const name = (form.elements.namedItem('display_name') as HTMLInputElement).value.trim();
    const params = { display_name: name };
    const create = async (idempotencyKey: string) =>
      void (await client.vaults.create(params, { idempotencyKey }));
    if (await run(create, params)) {
      form.reset();
      done();
    }
  };
  return (
    <form
      class="inline-form"
      data-testid="create-vault"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(e.currentTarget as HTMLFormElement);
      }}
    >
      <input name="display_name" required placeholder="Vault name" aria-label="Vault name" />{' '}
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create Vault'}
      </button>
      <Failure error={error} />
    </form>
  );
}

/**
 * A `static_bearer` credential for one MCP server URL. The token field is a password input without
 * autocomplete; the value is read from the form at submit, sent once (no retry of an uncertain write) and
 * the form is reset whatever the answer, so the secret is never kept or shown by the page.
 */
function AddBearerCredential({ vaultId, done }: { vaultId: string; done: () => void }) {
  const client = useClient();
  const { busy, error, run } = useWrite();
  const submit = async (form: HTMLFormElement) => {
    const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const displayName = field('display_name');
    const params = {
      auth: { type: 'static_bearer', mcp_server_url: field('mcp_server_url'), token: field('token') },
      ...(displayName ? { display_name: displayName } : {}),
    };
    (form.elements.namedItem('token') as HTMLInputElement).value = '';
    // The retry key follows the request without its token (the page keeps no secret).
    const request = { vaultId, url: params.auth.mcp_server_url, display_name: displayName };
    const ok = await run(
      async (idempotencyKey) =>
        void (await client.vaults.credentials.create(vaultId, params as never, {
          maxRetries: 0,
          idempotencyKey,
        })),
      request,
    );
    if (ok) {
      form.reset();
      done();
    }
  };
  return (
    <form
      class="inline-form"
      data-testid="add-credential"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(e.currentTarget as HTMLFormElement);
      }}
    >
      <input
        name="mcp_server_url"
        type="url"
        required
        placeholder="https://mcp.example.com/mcp"
        aria-label="MCP server URL"
      />{' '}
      <input
        name="token"
        type="password"
        required
        autocomplete="off"
        placeholder="bearer token (write-only)"
        aria-label="Bearer token"
      />{' '}
      <input name="display_name" placeholder="name (optional)" aria-label="Credential name" />{' '}
      <button type="submit" disabled={busy}>
        {busy ? 'Adding…' : 'Add bearer credential'}
      </button>
      <Failure error={error} />
    </form>
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
