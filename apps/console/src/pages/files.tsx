import { useClient } from '../api';
import { useLoad, when } from '../hooks';
import { bytes, ListBody } from './parts';

/** Files of the Workspace (metadata only: name, type, size, created; the bytes are not fetched). */
export function FilesPage() {
  const client = useClient();
  const files = useLoad(() => client.files.list({ limit: 100 }) as Promise<{ data: any[] }>, [client]);
  return (
    <section>
      <h1>Files</h1>
      <ListBody loaded={files} empty="No Files yet.">
        {(items: any[]) => (
          <table class="list" data-testid="files">
            <thead>
              <tr>
                <th>File</th>
                <th>Name</th>
                <th>Type</th>
                <th>Size</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {items.map((f) => (
                <tr key={f.id}>
                  <td class="mono">{f.id}</td>
                  <td>{f.filename}</td>
                  <td class="mono">{f.mime_type}</td>
                  <td class="num">{bytes(f.size_bytes)}</td>
                  <td>{when(f.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListBody>
    </section>
  );
}
