import { useClient } from '../api';
import { useLoad, useWrite, when } from '../hooks';
import { Action, bytes, Failure, ListBody } from './parts';

/** Files of the Workspace (metadata only: name, type, size, created; the bytes are not fetched): upload and delete. */
export function FilesPage() {
  const client = useClient();
  const files = useLoad(() => client.files.list({ limit: 100 }) as Promise<{ data: any[] }>, [client]);
  return (
    <section>
      <h1>Files</h1>
      <UploadFile done={files.reload} />
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
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((f) => (
                <tr key={f.id} data-testid="file">
                  <td class="mono">{f.id}</td>
                  <td>{f.filename}</td>
                  <td class="mono">{f.mime_type}</td>
                  <td class="num">{bytes(f.size_bytes)}</td>
                  <td>{when(f.created_at)}</td>
                  <td>
                    <Action
                      label="Delete"
                      testid="delete-file"
                      confirm={`Delete ${f.filename} (${f.id})? Sessions that mounted it keep their copy.`}
                      run={() => client.files.delete(f.id)}
                      done={files.reload}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListBody>
    </section>
  );
}

/** One file from the browser, uploaded through the API (multipart, the same call as `client.files.upload`). */
function UploadFile({ done }: { done: () => void }) {
  const client = useClient();
  const { busy, error, run } = useWrite();
  const submit = async (form: HTMLFormElement) => {
    const file = (form.elements.namedItem('file') as HTMLInputElement).files?.[0];
    if (!file) return;
    const request = { name: file.name, size: file.size, lastModified: file.lastModified };
    if (
      await run(
        async (idempotencyKey) => void (await client.files.upload({ file }, { idempotencyKey })),
        request,
      )
    ) {
      form.reset();
      done();
    }
  };
  return (
    <form
      class="inline-form"
      data-testid="upload-file"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(e.currentTarget as HTMLFormElement);
      }}
    >
      <input type="file" name="file" required aria-label="File to upload" />{' '}
      <button type="submit" disabled={busy}>
        {busy ? 'Uploading…' : 'Upload'}
      </button>
      <Failure error={error} />
    </form>
  );
}
