import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { create as createTar } from 'tar';

export const SKILL_ARCHIVE_CONTENT_TYPE = 'application/gzip';

/** The archive being produced: its bytes as a stream, and (once read to the end) length and digest. */
export interface SkillArchiveStream {
  stream: Readable;
  /** Valid once `stream` ended. */
  digest(): { sizeBytes: number; sha256: string };
}

/**
 * Streams a gzip-compressed tar of `paths` (regular files, relative to `root`, each starting with the
 * bundle's top-level directory). Portable headers without owner, group or times, members in sorted
 * order, so the same bundle gives the same archive. Length and SHA-256 are computed as the bytes pass.
 */
export function packSkillArchive(root: string, paths: readonly string[]): SkillArchiveStream {
  const pack = createTar(
    { gzip: true, cwd: root, portable: true, noMtime: true, follow: false },
    [...paths].sort(),
  );
  const hash = createHash('sha256');
  let size = 0;
  let result: { sizeBytes: number; sha256: string } | undefined;
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of pack as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.length;
      yield chunk;
    }
    result = { sizeBytes: size, sha256: hash.digest('hex') };
  }
  return {
    stream: Readable.from(counted(), { objectMode: false }),
    digest() {
      if (!result) throw new Error('the Skill archive was not read to the end');
      return result;
    },
  };
}
