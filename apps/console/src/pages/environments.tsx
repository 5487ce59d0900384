import { useState } from 'preact/hooks';
import { messageOf, useClient } from '../api';
import { useLoad, when } from '../hooks';

/** Environments with their Work queue statistics and healthcheck history (refreshed every 5 s). */
export function EnvironmentsPage() {
  const client = useClient();
  const { data, error } = useLoad(() => client.environments.list({ limit: 100 }), [client]);
  return (
    <section>
      <h1>Environments</h1>
      {error && <p class="error">{error}</p>}
      {data?.data.length === 0 && <p>No Environments yet.</p>}
      {data?.data.map((env: any) => (
        <EnvironmentCard key={env.id} env={env} />
      ))}
    </section>
  );
}

function EnvironmentCard({
  env,
}: {
  env: { id: string; name: string; archived_at: string | null; config?: { type?: string } };
}) {
  const client = useClient();
  const [note, setNote] = useState<string | null>(null);
  const stats = useLoad(() => client.environments.work.stats(env.id), [client, env.id], 5000);
  const work = useLoad(
    () => client.environments.work.list(env.id, { limit: 50 } as never),
    [client, env.id],
    5000,
  );
  const checks = ((work.data as { data?: any[] } | undefined)?.data ?? []).filter(
    (w) => w.data?.type === 'healthcheck',
  );
  const s = stats.data as Record<string, any> | undefined;
  const runCheck = async () => {
    try {
      await client.environments.work.create(env.id);
      setNote('healthcheck queued');
      work.reload();
    } catch (e) {
      setNote(messageOf(e));
    }
  };
  return (
    <article class="card" data-testid="environment">
      <h2>
        {env.name} <span class="mono dim">{env.id}</span>{' '}
        {env.archived_at && <span class="dim">archived</span>}
      </h2>
      <p class="dim">{env.config?.type ?? ''}</p>
      {stats.error && <p class="error">{stats.error}</p>}
      {s && (
        <dl class="stats" data-testid="queue-stats">
          <dt>queued</dt>
          <dd>{String(s.depth ?? '—')}</dd>
          <dt>pending</dt>
          <dd>{String(s.pending ?? '—')}</dd>
          <dt>oldest queued</dt>
          <dd>{when(s.oldest_queued_at)}</dd>
          <dt>workers polling</dt>
          <dd>{String(s.workers_polling ?? '—')}</dd>
        </dl>
      )}
      <h3>
        Healthchecks{' '}
        <button type="button" onClick={runCheck} disabled={!!env.archived_at}>
          Run healthcheck
        </button>{' '}
        {note && <span class="dim">{note}</span>}
      </h3>
      {checks.length === 0 ? (
        <p class="dim">No healthchecks yet.</p>
      ) : (
        <table class="list" data-testid="healthchecks">
          <thead>
            <tr>
              <th>Work</th>
              <th>State</th>
              <th>Result</th>
              <th>Created</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {checks.map((w) => (
              <tr key={w.id}>
                <td class="mono">{w.id}</td>
                <td>{w.state}</td>
                <td>{w.result ? JSON.stringify(w.result) : '—'}</td>
                <td>{when(w.created_at)}</td>
                <td>{when(w.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}
