import { Confinement } from './confine';
import { writeAtomic } from './file-io';
import { Tool, ToolError } from './types';

/** `write` (§5.3): creates parents (0700), writes atomically; refuses read-only roots. */
export function writeTool(conf: Confinement): Tool {
  return {
    name: 'write',
    async run(input) {
      const p = input.file_path;
      const content = input.content;
      if (typeof p !== 'string' || !p) throw new ToolError('write: file_path is required');
      if (typeof content !== 'string') throw new ToolError('write: content is required');
      const r = await conf.resolve('write', p);
      Confinement.assertWritable('write', p, r);
      await writeAtomic('write', p, r.real, content);
      return `wrote ${Buffer.byteLength(content, 'utf8')} bytes to ${p}`;
    },
  };
}
