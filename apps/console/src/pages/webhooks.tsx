import { useClient } from '../api';
import { useLoad, when } from '../hooks';
import { ListBody, Toggle } from './parts';

/** Webhook endpoints and their recent deliveries with every attempt (the signing secret is shown only once, at create, by the API). */
export function WebhooksPage() {
  const client = useClient();
  const hooks = useLoad(() => client.webhooks.list({ limit: 100 }) as Promise<{ data: any[] }>, [client]);
  return (
    <section>
      <h1>Webhooks</h1>
      <ListBody loaded={hooks} empty="No webhook endpoints yet.">
        {(items: any[]) =>
          items.map((w) => (
            <article class="card" key={w.id} data-testid="webhook">
              <h2>
                <span class="mono">{w.url}</span> <span class="mono dim">{w.id}</span>{' '}
                {w.disabled && <span class="dim">disabled {when(w.disabled_at)}</span>}
              </h2>
              {w.description && <p>{w.description}</p>}
              <p class="dim">events {(w.event_types ?? []).join(', ')}</p>
              <Toggle label="Deliveries">{() => <Deliveries webhookId={w.id} />}</Toggle>
            </article>
          ))
        }
      </ListBody>
    </section>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const client = useClient();
  const deliveries = useLoad(
    () => client.webhooks.deliveries.list(webhookId, { limit: 50 }) as Promise<{ data: any[] }>,
    [client, webhookId],
    5000,
  );
  return (
    <ListBody loaded={deliveries} empty="No deliveries yet.">
      {(items: any[]) => (
        <table class="list" data-testid="deliveries">
          <thead>
            <tr>
              <th>Delivery</th>
              <th>Event</th>
              <th>Trigger</th>
              <th>State</th>
              <th>Attempts</th>
              <th>Created</th>
              <th>Completed</th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <tr key={d.id}>
                <td class="mono">{d.id}</td>
                <td>
                  {d.event?.type} <span class="mono dim">{d.event?.id}</span>
                </td>
                <td>{d.trigger}</td>
                <td>{d.state}</td>
                <td>
                  {(d.attempts ?? []).length === 0
                    ? '—'
                    : d.attempts
                        .map(
                          (a: any) =>
                            `#${a.attempt} ${a.status_code ?? 'no status'} ${a.latency_ms} ms${a.error ? ` (${a.error})` : ''}`,
                        )
                        .join('; ')}
                </td>
                <td>{when(d.created_at)}</td>
                <td>{when(d.completed_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListBody>
  );
}
