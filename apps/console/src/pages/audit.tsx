import { useState } from 'preact/hooks';
import { useClient } from '../api';
import { usePaged, when } from '../hooks';
import { Pager } from './pager';

interface AuditEntry {
  id: string;
  created_at: string;
  actor: { type: string; id: string; label: string | null };
  operation: string;
  resource_id: string | null;
  request_id: string;
  status_code: number;
  outcome: 'succeeded' | 'failed';
}

/** The audit log: every write through the API, newest first, 50 a page, filtered by outcome, operation, actor and resource. */
export function AuditPage() {
  const client = useClient();
  const [outcome, setOutcome] = useState('');
  const [operation, setOperation] = useState('');
  const [actor, setActor] = useState('');
  const [resource, setResource] = useState('');
  const paged = usePaged(
    (page) =>
      client.auditLog.list({
        limit: 50,
        ...(page ? { page } : {}),
        ...(outcome ? { outcome } : {}),
        ...(operation.trim() ? { operation: operation.trim() } : {}),
        ...(actor.trim() ? { actor_id: actor.trim() } : {}),
        ...(resource.trim() ? { resource_id: resource.trim() } : {}),
      } as never) as unknown as Promise<{ data: AuditEntry[]; next_page: string | null }>,
    [client, outcome, operation, actor, resource],
    10_000,
  );
  const text = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  return (
    <section>
      <h1>Audit log</h1>
      <p class="dim">Every write through the API: who, what, when and the outcome. Reads are not recorded.</p>
      <form class="filters" data-testid="audit-filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Outcome{' '}
          <select name="outcome" value={outcome} onChange={text(setOutcome)}>
            <option value="">any</option>
            <option value="succeeded">succeeded</option>
            <option value="failed">failed</option>
          </select>
        </label>
        <label>
          Operation{' '}
          <input
            name="operation"
            placeholder="POST /v1/agents"
            value={operation}
            onChange={text(setOperation)}
          />
        </label>
        <label>
          Actor <input name="actor" placeholder="key_…" value={actor} onChange={text(setActor)} />
        </label>
        <label>
          Resource{' '}
          <input name="resource" placeholder="sesn_…" value={resource} onChange={text(setResource)} />
        </label>
      </form>
      {paged.error && <p class="error">{paged.error}</p>}
      {paged.rows && paged.rows.length === 0 && (
        <p>No writes recorded{outcome || operation || actor || resource ? ' match' : ''}.</p>
      )}
      {paged.rows && paged.rows.length > 0 && (
        <table class="list" data-testid="audit">
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>Operation</th>
              <th>Resource</th>
              <th>Outcome</th>
              <th>Request</th>
            </tr>
          </thead>
          <tbody>
            {paged.rows.map((r) => (
              <tr key={r.id} data-testid="audit-row">
                <td>{when(r.created_at)}</td>
                <td>
                  {r.actor.label ?? r.actor.type}
                  <div class="mono dim">{r.actor.id}</div>
                </td>
                <td class="mono">{r.operation}</td>
                <td class="mono">{r.resource_id ?? '—'}</td>
                <td>
                  <span class={`status status-${r.outcome === 'succeeded' ? 'idle' : 'terminated'}`}>
                    {r.outcome}
                  </span>{' '}
                  <span class="dim">{r.status_code}</span>
                </td>
                <td class="mono dim">{r.request_id}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager paged={paged} testid="audit" />
    </section>
  );
}
