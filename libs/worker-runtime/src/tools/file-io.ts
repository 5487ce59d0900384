import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readlink, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Confinement, Resolved } from './confine';
import { fsError } from './fs-errors';
import { ToolError } from './types';

/**
 * Opens a confined regular file for reading without following a leaf symlink swapped in after the check,
 * then re-checks what was actually opened (/proc/self/fd) against the permitted roots.
 */
export async function openConfined(
  conf: Confinement,
  tool: string,
  p: string,
  r: Resolved,
): Promise<{ fh: FileHandle; size: number }> {
  let fh: FileHandle;
  try {
    fh = await open(r.real, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    throw fsError(tool, p, err);
  }
  try {
    const opened = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => r.real);
    if (!(await conf.rootOf(opened))) throw new ToolError(`${tool}: ${conf.outsideMessage(p)}`);
    const st = await fh.stat();
    if (!st.isFile()) throw new ToolError(`${tool}: ${p} is not a regular file`);
    return { fh, size: st.size };
  } catch (err) {
    await fh.close();
    throw fsError(tool, p, err);
  }
}

/** Writes atomically: a temp file beside the target, fsync, rename. Parents are created with mode 0700. */
export async function writeAtomic(tool: string, p: string, real: string, data: string): Promise<void> {
  const dir = dirname(real);
  const tmp = join(dir, `.${basename(real)}.mango-${randomBytes(6).toString('hex')}`);
  try {
    const existing = await stat(real).catch(() => undefined);
    if (existing?.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const fh = await open(tmp, 'wx', existing ? existing.mode & 0o7777 : 0o644);
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, real);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw fsError(tool, p, err);
  }
}
