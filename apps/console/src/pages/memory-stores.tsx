import { useClient } from '../api';
import { useLoad, when } from '../hooks';
import { bytes, ListBody, metadataText, Toggle } from './parts';

/** Memory Stores and their memories (paths, sizes, versions; the `basic` view, without content). */
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
              <Toggle label="Memories">{() => <Memories storeId={s.id} />}</Toggle>
            </article>
          ))
        }
      </ListBody>
    </section>
  );
}

function Memories({ storeId }: { storeId: string }) {
  const client = useClient();
  const memories = useLoad(
    () =>
      client.memoryStores.memories.list(storeId, { limit: 100, view: 'basic' } as never) as Promise<{
        data: any[];
      }>,
    [client, storeId],
  );
  return (
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
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListBody>
  );
}
