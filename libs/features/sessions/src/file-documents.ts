import { DomainError, ErrorCode, FileTextReader, invalidRequest } from '@mango/domain-kernel';
import { ClientEvent, resolvedFileRubric } from '@mango/domain-sessions';

/**
 * File documents become text documents at admission (docs/api-guide.md "Files — choices": bounded UTF-8 only), before any write:
 * the event keeps the text, so deleting the File later changes nothing. Refusals are the reader's
 * (404 another Workspace's or unknown File, 400 image/PDF/too large/not UTF-8).
 */
export async function admitFileDocuments(
  files: FileTextReader | undefined,
  workspaceId: string,
  events: ClientEvent[],
  field = 'events',
): Promise<void> {
  for (const [n, e] of events.entries()) {
    if (e.type === 'user.define_outcome' && e.rubric.type === 'file') {
      // A File rubric is read like a File document (bounded UTF-8 text) and kept as text on the event.
      const path = `${field}[${n}]`;
      if (!files)
        throw invalidRequest(
          `${path}.rubric: File rubrics need object storage configured on the API (MANGO_S3_ENDPOINT); send the rubric as text`,
        );
      const fileId = e.rubric.file_id;
      const file = await files.readText(workspaceId, fileId).catch((err: unknown) => {
        if (err instanceof DomainError && err.code === ErrorCode.NotFound)
          throw invalidRequest(`${path}.rubric: file ${fileId} not found`);
        throw err;
      });
      e.rubric = resolvedFileRubric(path, fileId, file.text);
    }
    if (e.type !== 'user.message') continue;
    for (const [i, block] of e.content.entries()) {
      if (block.type !== 'document' || block.source.type !== 'file') continue;
      if (!files)
        throw invalidRequest(
          'File documents need object storage configured on the API (MANGO_S3_ENDPOINT); send the text inline',
        );
      // A body naming a missing resource is a 400 here, as for an unknown agent or tool use.
      const fileId = block.source.file_id;
      const file = await files.readText(workspaceId, fileId).catch((err: unknown) => {
        if (err instanceof DomainError && err.code === ErrorCode.NotFound)
          throw invalidRequest(`content[${i}]: file ${fileId} not found`);
        throw err;
      });
      e.content[i] = {
        ...block,
        source: { type: 'text', media_type: 'text/plain', data: file.text },
        title: block.title ?? file.filename,
      };
    }
  }
}
