import type { Session } from '@mango/sdk';
import { useClient } from '../api';
import { useLoad, when } from '../hooks';
import { formatMoney, usageView } from '../transcript';

/** Sessions list: status, Agent, usage, cost against budget, created, updated — newest first, refreshed every 5 s. */
export function SessionsPage() {
  const client = useClient();
  const { data, error } = useLoad(() => client.sessions.list({ limit: 50 }), [client], 5000);
  return (
    <section>
      <h1>Sessions</h1>
      {error && <p class="error">{error}</p>}
      {data && data.data.length === 0 && <p>No Sessions yet.</p>}
      {data && data.data.length > 0 && (
        <table class="list" data-testid="sessions">
          <thead>
            <tr>
              <th>Session</th>
              <th>Status</th>
              <th>Agent</th>
              <th>Tokens in / out</th>
              <th>Cost / budget</th>
              <th>Created</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {data.data.map((s: Session) => {
              const u = usageView(s.usage as Record<string, unknown>, s.budget as never);
              const agent = s.agent as { id: string; name?: string; version?: number };
              return (
                <tr key={s.id}>
                  <td>
                    <a href={`/console/sessions/${s.id}`}>{s.title || s.id}</a>
                    <div class="mono dim">{s.id}</div>
                  </td>
                  <td>
                    <span class={`status status-${s.status}`}>{s.status}</span>
                  </td>
                  <td>
                    {agent.name ?? agent.id} <span class="dim">v{agent.version}</span>
                  </td>
                  <td class="num">
                    {u.inputTokens} / {u.outputTokens}
                  </td>
                  <td class="num">
                    {formatMoney(u.cost)} / {u.budget ? formatMoney(u.budget) : 'no budget'}
                  </td>
                  <td>{when(s.created_at)}</td>
                  <td>{when(s.updated_at)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
