import busboy from 'busboy';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError, invalidRequest } from '@mango/domain-kernel';
import { assertStorableText } from '@mango/platform-http';
import { bundleTooLarge, parseMemberPath, SKILL_MD_MAX_BYTES } from './skill-bundle';

/** A bundle received in full into a private temporary directory (removed by `dispose`). */
export interface SkillForm {
  /** `display_title` when the form carried one. */
  displayTitle: string | null;
  /** The directory holding the members at their paths. */
  root: string;
  /** Member paths in arrival order. */
  paths: string[];
  expandedBytes: number;
  /** The bytes of `<top>/SKILL.md` (bounded), or null when the bundle has none. */
  skillMd: Buffer | null;
  dispose(): Promise<void>;
}

export const DISPLAY_TITLE_MAX = 255;
const FILE_FIELDS = new Set(['files[]', 'files']);
/** Multipart framing per part (headers, boundary) when comparing Content-Length with the limit. */
const FRAMING_PER_PART = 1024;

const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));

/**
 * Reads a Skill bundle upload: `multipart/form-data` with one `files[]` (or `files`) part per file —
 * the part's filename is the member's relative path, kept as sent — and, when `allowDisplayTitle`, an
 * optional `display_title` field. Each part streams to a temporary file (never a whole bundle in
 * memory); paths are checked as they arrive (unsafe, duplicate, file-vs-directory, another top-level
 * directory: 400), the number of files is bounded (400) and so are the total bytes (413, before
 * reading when Content-Length already shows it). On any refusal the rest of the body is drained and
 * the temporary directory removed.
 */
export async function readSkillForm(
  req: IncomingMessage,
  opts: { maxBytes: number; maxFiles: number; allowDisplayTitle: boolean },
): Promise<SkillForm> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType))
    throw invalidRequest('upload a Skill as multipart/form-data with one "files[]" part per file');
  const length = Number(req.headers['content-length']);
  if (Number.isFinite(length) && length > opts.maxBytes + 64 * 1024 + opts.maxFiles * FRAMING_PER_PART)
    throw bundleTooLarge(opts.maxBytes);
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      preservePath: true,
      limits: {
        fileSize: opts.maxBytes + 1,
        files: opts.maxFiles + 1,
        fields: 2,
        fieldSize: 4 * DISPLAY_TITLE_MAX,
      },
    });
  } catch (e) {
    throw invalidRequest(`malformed multipart/form-data request: ${(e as Error).message}`);
  }

  const root = await mkdtemp(join(tmpdir(), 'mango-skill-'));
  const dispose = () => rm(root, { recursive: true, force: true });
  const paths: string[] = [];
  const files = new Set<string>();
  const dirs = new Set<string>();
  const writes: Array<Promise<void>> = [];
  let top: string | undefined;
  let total = 0;
  let displayTitle: string | null = null;
  let skillMd: Buffer | null = null;
  let failure: unknown;
  let settle!: { resolve: () => void; reject: (e: unknown) => void };
  const finished = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));

  const fail = (reason: unknown) => {
    if (failure !== undefined) return;
    failure = reason;
    settle.reject(reason);
    req.unpipe(parser);
    req.resume();
    setImmediate(() => parser.destroy());
  };

  const admit = (path: string) => {
    const segments = path.split('/');
    if (top === undefined) top = segments[0];
    else if (segments[0] !== top)
      throw invalidRequest(`every file must be under one top-level directory ("${top}"); "${path}" is not`);
    if (files.has(path)) throw invalidRequest(`"${path}" is sent twice`);
    if (dirs.has(path)) throw invalidRequest(`"${path}" is both a file and a directory`);
    for (let i = 1; i < segments.length; i++) {
      const dir = segments.slice(0, i).join('/');
      if (files.has(dir)) throw invalidRequest(`"${dir}" is both a file and a directory`);
      dirs.add(dir);
    }
    files.add(path);
    paths.push(path);
    if (paths.length > opts.maxFiles)
      throw invalidRequest(`a Skill bundle may have at most ${opts.maxFiles} files`);
  };

  parser.on('file', (name, stream, info) => {
    // Our own refusals (413 from the byte count) come back through the part's stream as they are.
    stream.on('error', (err: Error) =>
      fail(
        err instanceof DomainError
          ? err
          : invalidRequest(`malformed multipart/form-data body: ${err.message}`),
      ),
    );
    if (failure !== undefined) return void stream.resume();
    let path: string;
    try {
      if (!FILE_FIELDS.has(name))
        throw invalidRequest(`unexpected part "${name}": send one "files[]" part per file`);
      assertStorableText(info.filename, `${name}.filename`);
      path = parseMemberPath(info.filename);
      admit(path);
    } catch (e) {
      stream.resume();
      return fail(e);
    }
    const isSkillMd = path === `${top}/SKILL.md`;
    const md: Buffer[] = [];
    let mdBytes = 0;
    stream.on('limit', () => fail(bundleTooLarge(opts.maxBytes)));
    // Counts (and keeps SKILL.md) as the bytes pass on their way to the temporary file.
    const count = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        total += chunk.length;
        if (total > opts.maxBytes) return cb(bundleTooLarge(opts.maxBytes));
        if (isSkillMd && mdBytes <= SKILL_MD_MAX_BYTES) {
          md.push(chunk);
          mdBytes += chunk.length;
        }
        cb(null, chunk);
      },
    });
    const target = join(root, ...path.split('/'));
    const write = (async () => {
      await mkdir(dirname(target), { recursive: true });
      await pipeline(stream, count, createWriteStream(target, { flags: 'wx', mode: 0o600 }));
      if (isSkillMd) skillMd = Buffer.concat(md, mdBytes);
    })();
    write.catch((err) =>
      fail(
        err instanceof DomainError
          ? err
          : invalidRequest(`could not receive "${path}": ${asError(err).message}`),
      ),
    );
    writes.push(write.catch(() => undefined));
  });
  parser.on('field', (name, value, info) => {
    try {
      assertStorableText(name, 'form part name');
      assertStorableText(value, name);
    } catch (e) {
      return fail(e);
    }
    if (name === 'display_title' && opts.allowDisplayTitle && displayTitle === null) {
      if (info.valueTruncated || value.length > DISPLAY_TITLE_MAX)
        return fail(invalidRequest(`display_title may have at most ${DISPLAY_TITLE_MAX} characters`));
      // eslint-disable-next-line no-control-regex
      if (/[\u0000-\u001f\u007f-\u009f]/.test(value))
        return fail(invalidRequest('display_title must not contain control characters'));
      displayTitle = value;
      return;
    }
    fail(
      invalidRequest(
        FILE_FIELDS.has(name)
          ? 'every "files[]" part needs a filename: its path inside the bundle'
          : `unexpected field "${name}"`,
      ),
    );
  });
  parser.on('filesLimit', () =>
    fail(invalidRequest(`a Skill bundle may have at most ${opts.maxFiles} files`)),
  );
  parser.on('fieldsLimit', () => fail(invalidRequest('unexpected extra fields in the form')));
  parser.on('error', (err: Error) =>
    fail(invalidRequest(`malformed multipart/form-data body: ${err.message}`)),
  );
  parser.on('close', () => {
    if (failure !== undefined) return;
    void Promise.all(writes).then(() => (failure === undefined ? settle.resolve() : undefined));
  });
  const interrupted = () => invalidRequest('the request body ended before the form was complete');
  req.on('error', () => fail(interrupted()));
  req.on('close', () => {
    if (!req.complete) fail(interrupted());
  });
  req.pipe(parser);
  try {
    await finished;
  } catch (e) {
    await Promise.all(writes);
    await dispose();
    throw e;
  }
  return { displayTitle, root, paths, expandedBytes: total, skillMd, dispose };
}
