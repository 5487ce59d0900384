import { useState } from 'preact/hooks';
import { useClient } from '../api';
import { useLoad, when } from '../hooks';

/** Agents and their stored versions (model, tools and permission policies per version). */
export function AgentsPage() {
  const client = useClient();
  const { data, error } = useLoad(() => client.agents.list({ limit: 100 }), [client]);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section>
      <h1>Agents</h1>
      {error && <p class="error">{error}</p>}
      {data?.data.length === 0 && <p>No Agents yet.</p>}
      {data?.data.map((a: any) => (
        <article class="card" key={a.id} data-testid="agent">
          <h2>
            {a.name} <span class="dim">v{a.version}</span> <span class="mono dim">{a.id}</span>
          </h2>
          <p>
            model <span class="mono">{typeof a.model === 'string' ? a.model : a.model?.id}</span> · updated{' '}
            {when(a.updated_at)}
            {a.archived_at && ' · archived'}
          </p>
          <button type="button" onClick={() => setOpen(open === a.id ? null : a.id)}>
            {open === a.id ? 'Hide versions' : 'Versions'}
          </button>
          {open === a.id && <Versions agentId={a.id} />}
        </article>
      ))}
    </section>
  );
}

function Versions({ agentId }: { agentId: string }) {
  const client = useClient();
  const { data, error } = useLoad(
    () => client.agents.versions.list(agentId, { limit: 100 } as never),
    [client, agentId],
  );
  if (error) return <p class="error">{error}</p>;
  if (!data) return <p>Loading…</p>;
  return (
    <table class="list" data-testid="versions">
      <thead>
        <tr>
          <th>Version</th>
          <th>Model</th>
          <th>Tools</th>
          <th>Created</th>
        </tr>
      </thead>
      <tbody>
        {(data as { data: any[] }).data.map((v) => (
          <tr key={v.version}>
            <td>v{v.version}</td>
            <td class="mono">{typeof v.model === 'string' ? v.model : v.model?.id}</td>
            <td>
              {(v.tools ?? [])
                .map((t: any) =>
                  t.type === 'custom'
                    ? `custom ${t.name}`
                    : `${t.type}${(t.configs ?? []).length ? ` (${t.configs.map((c: any) => `${c.name}: ${c.permission_policy?.type ?? 'default'}`).join(', ')})` : ''}`,
                )
                .join('; ') || '—'}
            </td>
            <td>{when(v.updated_at ?? v.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
