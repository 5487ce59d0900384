import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import { Confinement } from './confine';
import { Tool, ToolError } from './types';
import { walk } from './walk';

const MAX_RESULTS = 200;

/** `glob` (§5.5): relative doublestar patterns; regular files inside the root, newest first, at most 200. */
export function globTool(conf: Confinement): Tool {
  return {
    name: 'glob',
    async run(input, { signal }) {
      const pattern = input.pattern;
      if (typeof pattern !== 'string' || !pattern) throw new ToolError('glob: pattern is required');
      if (isAbsolute(pattern))
        throw new ToolError(
          'glob: absolute pattern not permitted; pass a relative pattern (and optionally path)',
        );
      if (pattern.split(/[\\/]/).includes('..'))
        throw new ToolError('glob: ".." is not permitted in the pattern');
      const base = typeof input.path === 'string' && input.path ? input.path : conf.workdir;
      const r = await conf.resolve('glob', base);
      const st = await stat(r.real).catch(() => undefined);
      if (!st?.isDirectory()) throw new ToolError(`glob: ${base} is not a directory`);
      const hits: Array<{ path: string; mtime: number }> = [];
      for (const e of await walk(r.real, pattern, { signal })) {
        let s = e.stats;
        if (e.symlink) {
          const target = await realpath(join(r.real, e.path)).catch(() => undefined);
          if (!target || !(target === r.real || target.startsWith(r.real + sep))) continue;
          const ts = await stat(target).catch(() => undefined);
          if (!ts) continue;
          s = ts;
        }
        if (s.isFile()) hits.push({ path: join(r.abs, e.path), mtime: s.mtimeMs });
      }
      if (!hits.length) return 'no matches';
      hits.sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path));
      return hits
        .slice(0, MAX_RESULTS)
        .map((h) => h.path)
        .join('\n');
    },
  };
}
