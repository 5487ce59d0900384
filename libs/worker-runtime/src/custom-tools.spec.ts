import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandTool, CustomToolsConfigError, parseCustomTools } from './custom-tools';
import { ToolError } from './tools/types';

const tool = (over: Record<string, unknown> = {}) => ({
  name: 'shout',
  description: 'Uppercase',
  input_schema: { type: 'object' },
  command: ['/bin/sh', '-c', 'tr a-z A-Z'],
  ...over,
});
const doc = (...tools: unknown[]) => JSON.stringify({ tools });

describe('parseCustomTools: the operator custom tools file', () => {
  it('accepts JSON and YAML, with the default timeout', () => {
    const spec = { ...tool(), timeout_ms: 60_000 };
    expect(parseCustomTools(doc(tool()))).toEqual([spec]);
    expect(parseCustomTools(JSON.stringify([tool()]))).toEqual([spec]);
    expect(
      parseCustomTools(
        'tools:\n  - name: shout\n    description: Uppercase\n    input_schema: {type: object}\n    command: [/bin/sh, -c, tr a-z A-Z]\n    timeout_ms: 500\n',
      ),
    ).toEqual([{ ...spec, timeout_ms: 500 }]);
  });

  it.each<[string, string, RegExp]>([
    ['not JSON or YAML', '{tools: [', /not valid JSON or YAML/],
    ['no tool list', '{"tool": []}', /expected \{"tools": \[\.\.\.\]\} or a list of tools/],
    ['an unknown top-level field', '{"tools": [], "extra": 1}', /unknown field "extra"/],
    ['a bad name', doc(tool({ name: 'has space' })), /tools\[0\]\.name must be 1-64 characters/],
    ['a built-in name', doc(tool({ name: 'bash' })), /tools\[0\]\.name "bash" is a built-in tool name/],
    ['a duplicate name', doc(tool(), tool()), /tools\[1\]\.name "shout" is registered twice/],
    ['no description', doc(tool({ description: ' ' })), /tools\[0\]\.description must be a non-empty string/],
    [
      'a schema that is not an object schema',
      doc(tool({ input_schema: { type: 'string' } })),
      /tools\[0\]\.input_schema must be a JSON Schema object/,
    ],
    ['a command that is a string', doc(tool({ command: '/bin/true' })), /tools\[0\]\.command must be a list/],
    [
      'a relative executable',
      doc(tool({ command: ['sh'] })),
      /tools\[0\]\.command\[0\] must be an absolute path/,
    ],
    [
      'a timeout too long',
      doc(tool({ timeout_ms: 600_001 })),
      /tools\[0\]\.timeout_ms must be an integer from 100 to 600000/,
    ],
    ['an unknown field', doc(tool({ shell: true })), /tools\[0\]: unknown field "shell"/],
  ])('refuses %s with a message naming it', (_name, text, message) => {
    let error: unknown;
    try {
      parseCustomTools(text, 'file');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CustomToolsConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message.startsWith('file')).toBe(true);
  });
});

describe('commandTool: runs the executable with the input on stdin', () => {
  const workdir = mkdtempSync(join(tmpdir(), 'custom-tool-'));
  afterAll(() => rmSync(workdir, { recursive: true, force: true }));
  const run = (over: Record<string, unknown>, input: Record<string, unknown> = {}, signal?: AbortSignal) => {
    const [spec] = parseCustomTools(doc(tool(over)));
    return commandTool(spec!, {
      workdir,
      env: { PATH: '/usr/bin:/bin', MANGO_WORK_TOKEN: 'secret', SOME_API_KEY: 'secret', KEEP: 'yes' },
    }).run(input, {
      signal: signal ?? new AbortController().signal,
      toolUse: { id: 'sevt_1', name: 'shout', input },
    });
  };
  const failure = async (p: Promise<string>) => {
    try {
      await p;
    } catch (err) {
      expect(err).toBeInstanceOf(ToolError);
      return (err as Error).message;
    }
    throw new Error('expected a ToolError');
  };

  it('exit 0: stdout is the result; cwd is the workdir; credentials are scrubbed from its environment', async () => {
    expect(await run({}, { text: 'hi' })).toBe('{"TEXT":"HI"}');
    expect(
      await run({
        command: [
          '/bin/sh',
          '-c',
          'pwd; echo "$KEEP/${MANGO_WORK_TOKEN:-none}/${SOME_API_KEY:-none}/$MANGO_CUSTOM_TOOL"',
        ],
      }),
    ).toBe(`${workdir}\nyes/none/none/shout\n`);
  });

  it('a non-zero exit, a missing executable and a timeout are error results', async () => {
    expect(await failure(run({ command: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 4'] }))).toBe(
      'Error: shout exited with code 4\nout\n\nerr\n',
    );
    expect(await failure(run({ command: ['/nonexistent/tool'] }))).toBe(
      'Error: shout could not be started: ENOENT',
    );
    expect(await failure(run({ command: ['/bin/sleep', '5'], timeout_ms: 200 }))).toBe(
      'Error: shout did not finish within 200 ms and was killed',
    );
  });

  it('a cancelled call is killed', async () => {
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 100);
    expect(await failure(run({ command: ['/bin/sleep', '5'] }, {}, ctrl.signal))).toBe(
      'Error: shout was cancelled',
    );
  });
});
