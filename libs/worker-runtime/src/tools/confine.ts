import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fsError } from './fs-errors';
import { ToolError, ToolRoot } from './types';

const MAX_LINK_HOPS = 40;

export interface Resolved {
  /** The path as the model named it, resolved against the workdir (for messages and output). */
  abs: string;
  /** Every symlink resolved (also of a leaf that does not exist yet). */
  real: string;
  /** The permitted root that contains `real`. */
  root: ToolRoot;
}

/**
 * Confinement of the file tools (see docs/operator-guide.md, The Docker supervisor): paths resolve against the workdir, every symlink is
 * canonicalised (including a dangling leaf), and anything outside the workdir plus the attached roots is
 * refused. Roots are canonicalised once, so a root reached through a symlink still matches.
 */
export class Confinement {
  private realRoots?: Promise<ToolRoot[]>;

  constructor(
    readonly workdir: string,
    private readonly extraRoots: ToolRoot[] = [],
  ) {}

  private roots(): Promise<ToolRoot[]> {
    this.realRoots ??= Promise.all(
      [{ path: this.workdir, readOnly: false }, ...this.extraRoots].map(async (r) => ({
        path: await realpath(r.path).catch(() => resolve(r.path)),
        readOnly: r.readOnly,
      })),
    ).then((roots) => roots.sort((a, b) => b.path.length - a.path.length)); // most specific first
    return this.realRoots;
  }

  outsideMessage(p: string): string {
    return this.extraRoots.length
      ? `path "${p}" is outside the session's working directory and its other permitted directories`
      : `path "${p}" is outside the session's working directory`;
  }

  /** Resolves and checks `p`; throws ToolError when it escapes. */
  async resolve(tool: string, p: string): Promise<Resolved> {
    const abs = isAbsolute(p) ? resolve(p) : resolve(this.workdir, p);
    let real: string;
    try {
      real = await canonical(abs, 0);
    } catch (err) {
      throw fsError(tool, p, err);
    }
    const root = await this.rootOf(real);
    if (!root) throw new ToolError(`${tool}: ${this.outsideMessage(p)}`);
    return { abs, real, root };
  }

  /** The permitted root containing an already canonical path, or undefined. */
  async rootOf(real: string): Promise<ToolRoot | undefined> {
    return (await this.roots()).find((r) => real === r.path || real.startsWith(r.path + sep));
  }

  /** Refuses a mutation under a read-only root. */
  static assertWritable(tool: string, p: string, r: Resolved): void {
    if (r.root.readOnly) throw new ToolError(`${tool}: ${p} is inside read-only directory ${r.root.path}`);
  }
}

/** realpath that also resolves a path whose leaf (or trailing segments) does not exist yet. */
async function canonical(abs: string, hops: number): Promise<string> {
  if (hops > MAX_LINK_HOPS) throw Object.assign(new Error('ELOOP'), { code: 'ELOOP' });
  try {
    return await realpath(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const parent = dirname(abs);
  if (parent === abs) return abs;
  const realParent = await canonical(parent, hops);
  const candidate = join(realParent, abs.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
  const st = await lstat(candidate).catch(() => undefined);
  if (st?.isSymbolicLink()) {
    // A dangling link: follow it the way the kernel would when a file is created through it.
    return canonical(resolve(realParent, await readlink(candidate)), hops + 1);
  }
  return candidate;
}
