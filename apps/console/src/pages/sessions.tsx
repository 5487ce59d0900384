import type { Session } from '@mango/sdk';
import { useState } from 'preact/hooks';
import { useClient } from '../api';
import { useLoad, usePaged, when } from '../hooks';
import { formatMoney, usageView } from '../transcript';
import { Pager } from './pager';

export const SESSIONS_PER_PAGE = 50;
const STATUSES = ['idle', 'running', 'rescheduling', 'terminated'];

/**
 * Sessions list: status, Agent, usage, cost against budget, created, updated — newest first, 50 a page through
 * the list's cursor, filtered by status, Agent and creation time, the page shown refreshed every 5 s.
 */
export function SessionsPage() {
  const client = useClient();
  const [status, setStatus] = useState('');
  const [agentId, setAgentId] = useState('');
  const [since, setSince] = useState('');
  const agents = useLoad(() => client.agents.list({ limit: 100 }), [client]);
  const sinceIso = since && !Number.isNaN(Date.parse(since)) ? new Date(since).toISOString() : '';
  const paged = usePaged(
    (page) =>
      client.sessions.list({
        limit: SESSIONS_PER_PAGE,
        ...(page ? { page } : {}),
        ...(status ? { 'statuses[]': [status] } : {}),
        ...(agentId ? { agent_id: agentId } : {}),
        ...(sinceIso ? { 'created_at[gte]': sinceIso } : {}),
      } as never) as unknown as Promise<{ data: Session[]; next_page: string | null }>,
    [client, status, agentId, sinceIso],
    5000,
  );
  const rows = paged.rows;
  return (
    <section>
      <h1>Sessions</h1>
      <form class="filters" data-testid="session-filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status{' '}
          <select
            name="status"
            value={status}
            onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent{' '}
          <select
            name="agent"
            value={agentId}
            onChange={(e) => setAgentId((e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {(agents.data?.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Created since{' '}
          <input
            type="datetime-local"
            name="since"
            value={since}
            onChange={(e) => setSince((e.target as HTMLInputElement).value)}
          />
        </label>
      </form>
      {paged.error && <p class="error">{paged.error}</p>}
      {rows && rows.length === 0 && <p>No Sessions{status || agentId || sinceIso ? ' match' : ' yet'}.</p>}
      {rows && rows.length > 0 && (
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
            {rows.map((s: Session) => {
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
      <Pager paged={paged} testid="sessions" />
    </section>
  );
}
