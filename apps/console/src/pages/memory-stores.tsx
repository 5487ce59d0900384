import { useClient } from '../api';
import { useLoad, useWrite, when } from '../hooks';
import { Action, bytes, Failure, ListBody, metadataText, Toggle } from './parts';

/**
 * Memory Stores and their memories (paths, sizes, versions; the `basic` view, without content): create a
 * Store, archive it, write a memory at a new path, delete a memory (only while its content is the one
 * listed: the delete carries its `content_sha256`).
 */
export function MemoryStoresPage() {
  const client = useClient();
  const stores = useLoad(
    () =>
      client.memoryStores.list({ limit: 100, include_archived: true } as never) as Promise<{ data: any[] }>,
    [client],
  );
  return (
    <section>
      <h1>Memory Stores</h1>
      <CreateStore done={stores.reload} />
      <ListBody loaded={stores} empty="No Memory Stores yet.">
        {(items: any[]) =>
          items.map((s) => (
            <article class="card" key={s.id} data-testid="memory-store">
              <h2>
                {s.name} <span class="mono dim">{s.id}</span>{' '}
                {s.archived_at && <span class="dim">archived</span>}
              </h2>
              {s.description && <p>{s.description}</p>}
              <p class="dim">
                metadata {metadataText(s.metadata)} · updated {when(s.updated_at)}
              </p>
              {!s.archived_at && (
                <p>
                  <Action
                    label="Archive"
                    testid="archive-memory-store"
                    confirm={`Archive the Memory Store ${s.name}? It becomes read-only and cannot be attached to new Sessions.`}
                    run={() => client.memoryStores.archive(s.id)}
                    done={stores.reload}
                  />
                </p>
              )}
              <Toggle label="Memories">{() => <Memories storeId={s.id} archived={!!s.archived_at} />}</Toggle>
            </article>
          ))
        }
      </ListBody>
    </section>
  );
}

function Memories({ storeId, archived }: { storeId: string; archived: boolean }) {
  const client = useClient();
  const memories = useLoad(
    () =>
      client.memoryStores.memories.list(storeId, { limit: 100, view: 'basic' } as never) as Promise<{
        data: any[];
      }>,
    [client, storeId],
  );
  return (
    <>
      {!archived && <WriteMemory storeId={storeId} done={memories.reload} />}
      <ListBody loaded={memories} empty="No memories in this Store.">
        {(items: any[]) => (
          <table class="list" data-testid="memories">
            <thead>
              <tr>
                <th>Path</th>
                <th>Memory</th>
                <th>Size</th>
                <th>SHA-256</th>
                <th>Updated</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((m) => (
                <tr key={m.id ?? m.path}>
                  <td class="mono">{m.path}</td>
                  <td class="mono">{m.type === 'memory_prefix' ? 'folder' : m.id}</td>
                  <td class="num">{bytes(m.content_size_bytes)}</td>
                  <td class="mono dim">{m.content_sha256 ? m.content_sha256.slice(0, 12) : '—'}</td>
                  <td>{when(m.updated_at)}</td>
                  <td>
                    {!archived && m.type !== 'memory_prefix' && (
                      <Action
                        label="Delete"
                        testid="delete-memory"
                        confirm={`Delete the memory ${m.path}?`}
                        run={() =>
                          client.memoryStores.memories.delete(
                            storeId,
                            m.id,
                            m.content_sha256 ? { expected_content_sha256: m.content_sha256 } : {},
                          )
                        }
                        done={memories.reload}
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

/** A new Memory Store: its name and an optional description. */
function CreateStore({ done }: { done: () => void }) {
  const client = useClient();
  const { busy, error, run } = useWrite();
  const submit = async (form: HTMLFormElement) => {
    const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const description = field('description');
    const params = { name: field('name'), ...(description ? { description } : {}) };
    const create = async (idempotencyKey: string) =>
      void (await client.memoryStores.create(params as never, { idempotencyKey }));
    if (await run(create, params)) {
      form.reset();
      done();
    }
  };
  return (
    <form
      class="inline-form"
      data-testid="create-memory-store"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(e.currentTarget as HTMLFormElement);
      }}
    >
      <input name="name" required placeholder="Store name" aria-label="Store name" />{' '}
      <input name="description" placeholder="description (optional)" aria-label="Description" />{' '}
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create Memory Store'}
      </button>
      <Failure error={error} />
    </form>
  );
}

/** A memory at a new path (a taken path is the API's 409 `memory_path_conflict_error`, shown beside the form). */
function WriteMemory({ storeId, done }: { storeId: string; done: () => void }) {
  const client = useClient();
  const { busy, error, run } = useWrite();
  const submit = async (form: HTMLFormElement) => {
    const path = (form.elements.namedItem('path') as HTMLInputElement).value.trim();
    const content = (form.elements.namedItem('content') as HTMLTextAreaElement).value;
    const ok = await run(
      async (idempotencyKey) =>
        void (await client.memoryStores.memories.create(
          storeId,
          { path, content },
          { view: 'basic' },
          { maxRetries: 0, idempotencyKey },
        )),
      { storeId, path, content },
    );
    if (ok) {
      form.reset();
      done();
    }
  };
  return (
    <form
      class="inline-form"
      data-testid="write-memory"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(e.currentTarget as HTMLFormElement);
      }}
    >
      <input name="path" required placeholder="/notes/today.md" aria-label="Memory path" />{' '}
      <textarea name="content" rows={3} placeholder="content" aria-label="Memory content" />{' '}
      <button type="submit" disabled={busy}>
        {busy ? 'Writing…' : 'Write memory'}
      </button>
      <Failure error={error} />
    </form>
  );
}
