import { createInterface } from 'node:readline';
import { Confinement } from './confine';
import { openConfined } from './file-io';
import { READ_VIEW_RANGE_ABOVE_BYTES } from '../worker-contract';
import { Tool, ToolError } from './types';

/**
 * `read` (wire contract §5.2): raw UTF-8 text; `view_range` selects 1-indexed inclusive lines. A file above
 * `maxBytes` (the contract: 110,000) without a `view_range` is a tool error that asks for one, never a
 * truncated dump; a selected range is capped at the same size.
 */
export function readTool(conf: Confinement, maxBytes = READ_VIEW_RANGE_ABOVE_BYTES): Tool {
  return {
    name: 'read',
    async run(input) {
      const p = input.file_path;
      if (typeof p !== 'string' || !p) throw new ToolError('read: file_path is required');
      const range = parseRange(input.view_range);
      const r = await conf.resolve('read', p);
      const { fh, size } = await openConfined(conf, 'read', p, r);
      try {
        if (!range) {
          if (size > maxBytes)
            throw new ToolError(
              `read: ${p} is ${size} bytes, exceeds ${maxBytes}-byte limit. Use the view_range parameter to read specific line ranges, e.g. view_range: [1, 500].`,
            );
          return await fh.readFile('utf8');
        }
        const [start, end] = range;
        const lines: string[] = [];
        let bytes = 0;
        let n = 0;
        const rl = createInterface({ input: fh.createReadStream({ autoClose: false }), crlfDelay: Infinity });
        try {
          for await (const line of rl) {
            n++;
            if (n < start) continue;
            if (end > 0 && n > end) break;
            bytes += Buffer.byteLength(line) + 1;
            if (bytes > maxBytes) {
              throw new ToolError(
                start === end
                  ? `read: line ${start} of ${p} exceeds ${maxBytes}-byte limit.`
                  : `read: view_range [${start}, ${end}] of ${p} exceeds ${maxBytes}-byte limit. Request a smaller range.`,
              );
            }
            lines.push(line);
          }
        } finally {
          rl.close();
        }
        return lines.join('\n');
      } finally {
        await fh.close();
      }
    },
  };
}

function parseRange(v: unknown): [number, number] | undefined {
  if (v === undefined || v === null) return undefined;
  if (
    !Array.isArray(v) ||
    v.length !== 2 ||
    !v.every((x) => Number.isInteger(x)) ||
    (v[0] as number) < 1 ||
    ((v[1] as number) > 0 && (v[1] as number) < (v[0] as number))
  )
    throw new ToolError('read: view_range must be [start_line, end_line]');
  return [v[0] as number, v[1] as number];
}
