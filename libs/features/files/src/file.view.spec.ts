import type { FileEntity } from '@mango/persistence';
import { renderFile } from './file.view';

describe('renderFile', () => {
  it('renders exactly the File fields: no workspace, object key, scope or downloadable', () => {
    const file = {
      id: 'file_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      workspaceId: 'wrkspc_default',
      filename: 'a.txt',
      mimeType: 'text/plain',
      sizeBytes: 12,
      objectKey: 'workspaces/wrkspc_default/files/file_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      createdAt: new Date('2026-01-01T00:00:00.5Z'),
    } as FileEntity;
    expect(renderFile(file)).toEqual({
      id: file.id,
      type: 'file',
      filename: 'a.txt',
      mime_type: 'text/plain',
      size_bytes: 12,
      created_at: '2026-01-01T00:00:00.500Z',
    });
  });
});
