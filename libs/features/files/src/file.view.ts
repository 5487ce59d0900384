import type { FileEntity } from '@mango/persistence';

/** The wire form of a File (openapi.yaml `File` without `downloadable` and `scope`, which Mango removed). */
export function renderFile(f: FileEntity) {
  return {
    id: f.id,
    type: 'file' as const,
    filename: f.filename,
    mime_type: f.mimeType,
    size_bytes: f.sizeBytes,
    created_at: f.createdAt.toISOString(),
  };
}

export type FileView = ReturnType<typeof renderFile>;
