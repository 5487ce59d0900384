import { Confinement } from './confine';
import { openConfined, writeAtomic } from './file-io';
import { DEFAULT_MAX_FILE_BYTES, Tool, ToolError } from './types';

/** `edit` (§5.4): exact, literal replacement of a unique `old_string` (or every one with `replace_all`). */
export function editTool(conf: Confinement, maxBytes = DEFAULT_MAX_FILE_BYTES): Tool {
  return {
    name: 'edit',
    async run(input) {
      const p = input.file_path;
      const oldString = input.old_string;
      const newString = input.new_string;
      if (typeof p !== 'string' || !p) throw new ToolError('edit: file_path is required');
      if (typeof oldString !== 'string' || !oldString)
        throw new ToolError('edit: old_string must be a non-empty string');
      if (typeof newString !== 'string') throw new ToolError('edit: new_string is required');
      const r = await conf.resolve('edit', p);
      Confinement.assertWritable('edit', p, r);
      const { fh, size } = await openConfined(conf, 'edit', p, r);
      let text: string;
      try {
        if (size > maxBytes)
          throw new ToolError(
            `edit: ${p} is ${size} bytes, exceeds ${maxBytes}-byte limit. The edit tool loads the whole file and cannot modify a file this large.`,
          );
        text = await fh.readFile('utf8');
      } finally {
        await fh.close();
      }
      const parts = text.split(oldString);
      const count = parts.length - 1;
      if (count === 0) throw new ToolError(`edit: old_string not found in ${p}`);
      if (count > 1 && input.replace_all !== true)
        throw new ToolError(`edit: old_string appears ${count} times in ${p} (must be unique)`);
      await writeAtomic('edit', p, r.real, parts.join(newString));
      return `edited ${p} (${count} replacement${count === 1 ? '' : 's'})`;
    },
  };
}
