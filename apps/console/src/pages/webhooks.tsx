import { useState } from 'preact/hooks';
import { useClient } from '../api';
import { useLoad, useWrite, when } from '../hooks';
import { Action, Failure, ListBody, Toggle } from './parts';

/**
 * Webhook endpoints and their recent deliveries with every attempt: create one (its signing secret is
 * shown here once, as the API returns it once, and is kept in no storage), rotate its secret, disable or
 * enable it, delete it, redeliver a delivery.
 */
export function WebhooksPage() {
  const client = useClient();
  const hooks = useLoad(() => client.webhooks.list({ limit: 100 }) as Promise<{ data: any[] }>, [client]);
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);
  const shown = (r: unknown) => {
    const { id, secret: s } = r as { id: string; secret: string };
    setSecret({ id, secret: s });
    hooks.reload();
  };
  return (
    <section>
      <h1>Webhooks</h1>
      <CreateWebhook done={shown} />
      {secret && (
        <p class="notice" data-testid="webhook-secret">
          Signing secret of <span class="mono">{secret.id}</span>, shown this once — store it now:{' '}
          <code>{secret.secret}</code>{' '}
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </p>
      )}
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
              <p>
                <Action
                  label={w.disabled ? 'Enable' : 'Disable'}
                  testid="toggle-webhook"
                  run={() => client.webhooks.update(w.id, { disabled: !w.disabled } as never)}
                  done={hooks.reload}
                />{' '}
                <Action
                  label="Rotate secret"
                  testid="rotate-webhook"
                  confirm="Rotate the signing secret? The old one keeps verifying for the overlap the API documents."
                  run={() => client.webhooks.rotateSecret(w.id)}
                  done={shown}
                />{' '}
                <Action
                  label="Delete"
                  testid="delete-webhook"
                  confirm={`Delete the endpoint ${w.url}? Deliveries to it stop.`}
                  run={() => client.webhooks.delete(w.id)}
                  done={hooks.reload}
                />
              </p>
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
              <th />
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
                <td>
                  <Action
                    label="Redeliver"
                    testid="redeliver"
                    run={() => client.webhooks.deliveries.redeliver(webhookId, d.id)}
                    done={deliveries.reload}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListBody>
  );
}

/** A new endpoint: URL and event types (comma-separated `data.type` values), optional description. */
function CreateWebhook({ done }: { done: (created: unknown) => void }) {
  const client = useClient();
  const { busy, error, run } = useWrite();
  const submit = async (form: HTMLFormElement) => {
    const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const description = field('description');
    let created: unknown;
    const params = {
      url: field('url'),
      event_types: field('event_types')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
      ...(description ? { description } : {}),
    };
    const ok = await run(async (idempotencyKey) => {
      created = await client.webhooks.create(params as never, { idempotencyKey });
    }, params);
    if (ok) {
      form.reset();
      done(created);
    }
  };
  return (
    <form
      class="inline-form"
      data-testid="create-webhook"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(e.currentTarget as HTMLFormElement);
      }}
    >
      <input
        name="url"
        type="url"
        required
        placeholder="https://hooks.example.com/mango"
        aria-label="Endpoint URL"
      />{' '}
      <input
        name="event_types"
        required
        placeholder="session.status_idled, deployment_run.succeeded"
        aria-label="Event types"
      />{' '}
      <input name="description" placeholder="description (optional)" aria-label="Description" />{' '}
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create endpoint'}
      </button>
      <Failure error={error} />
    </form>
  );
}
