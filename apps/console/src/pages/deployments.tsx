import { useClient } from '../api';
import { useLoad, when } from '../hooks';
import { Action, ListBody, Toggle } from './parts';

/** Deployments (Agent pin, Environment, schedule, status) and their runs, newest first: run now, pause, unpause. */
export function DeploymentsPage() {
  const client = useClient();
  const deployments = useLoad(
    () =>
      client.deployments.list({ limit: 100, include_archived: true } as never) as Promise<{ data: any[] }>,
    [client],
  );
  return (
    <section>
      <h1>Deployments</h1>
      <ListBody loaded={deployments} empty="No Deployments yet.">
        {(items: any[]) =>
          items.map((d) => (
            <article class="card" key={d.id} data-testid="deployment">
              <h2>
                {d.name} <span class="mono dim">{d.id}</span>{' '}
                <span class={`status status-${d.status}`}>{d.status}</span>{' '}
                {d.archived_at && <span class="dim">archived</span>}
              </h2>
              {d.description && <p>{d.description}</p>}
              <p class="dim">
                Agent <span class="mono">{d.agent?.id}</span>
                {d.agent?.version ? ` v${d.agent.version}` : ' (latest)'} · Environment{' '}
                <span class="mono">{d.environment_id}</span>
                {d.paused_reason &&
                  ` · paused: ${d.paused_reason.type}${d.paused_reason.message ? ` (${d.paused_reason.message})` : ''}`}
              </p>
              <p data-testid="schedule">
                {d.schedule
                  ? `cron ${d.schedule.expression} (${d.schedule.timezone}) · last run ${when(d.schedule.last_run_at)} · next ${when(d.schedule.upcoming_runs_at?.[0])}`
                  : 'manual runs only'}
              </p>
              {!d.archived_at && (
                <p>
                  <Action
                    label="Run now"
                    testid="run-deployment"
                    run={(idempotencyKey) => client.deployments.run(d.id, { idempotencyKey })}
                    done={deployments.reload}
                  />{' '}
                  <Action
                    label={d.status === 'paused' ? 'Unpause' : 'Pause'}
                    testid="pause-deployment"
                    run={() =>
                      d.status === 'paused'
                        ? client.deployments.unpause(d.id)
                        : client.deployments.pause(d.id)
                    }
                    done={deployments.reload}
                  />
                </p>
              )}
              <Toggle label="Runs">{() => <Runs deploymentId={d.id} />}</Toggle>
            </article>
          ))
        }
      </ListBody>
    </section>
  );
}

function Runs({ deploymentId }: { deploymentId: string }) {
  const client = useClient();
  const runs = useLoad(
    () =>
      client.deploymentRuns.list({ deployment_id: deploymentId, limit: 50 } as never) as Promise<{
        data: any[];
      }>,
    [client, deploymentId],
    5000,
  );
  return (
    <ListBody loaded={runs} empty="No runs yet.">
      {(items: any[]) => (
        <table class="list" data-testid="runs">
          <thead>
            <tr>
              <th>Run</th>
              <th>Trigger</th>
              <th>Agent</th>
              <th>Session</th>
              <th>Error</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr key={r.id}>
                <td class="mono">{r.id}</td>
                <td>
                  {r.trigger_context?.type}
                  {r.trigger_context?.scheduled_at ? ` ${when(r.trigger_context.scheduled_at)}` : ''}
                </td>
                <td class="mono">
                  {r.agent?.id} v{r.agent?.version}
                </td>
                <td class="mono">
                  {r.session_id ? <a href={`/console/sessions/${r.session_id}`}>{r.session_id}</a> : '—'}
                </td>
                <td class={r.error ? 'error' : ''}>
                  {r.error ? `${r.error.type}: ${r.error.message}` : '—'}
                </td>
                <td>{when(r.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListBody>
  );
}
