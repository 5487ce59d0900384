import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { shellEnv } from './tools/shell-env';
import { Tool, ToolError } from './tools/types';

/*
 * Operator custom tools (docs/operator-guide.md "Operator custom tools"): command-backed tools the
 * supervisor registers (`mango-worker docker --custom-tools FILE` / MANGO_WORKER_CUSTOM_TOOLS). When a
 * Session's Agent declares a custom tool of the same name, the item runner answers its
 * `agent.custom_tool_use` calls itself: it runs the command inside the Session's sandbox container (the
 * same container, user, network and limits as the six tools), writes the call's input as JSON to its stdin,
 * and posts stdout as `user.custom_tool_result` with the Work token. A name the worker does not know stays
 * with the application (`requires_action`, unchanged).
 */

/** One registered tool, as validated from the operator's file. */
export interface CustomToolSpec {
  /** The custom tool's name, as the Agent declares it (`{type: "custom", name}`). */
  name: string;
  description: string;
  /** A JSON Schema object; the call's input must be an object (checked: `type: object`). */
  input_schema: Record<string, unknown>;
  /** argv: an absolute executable path inside the sandbox image, then its arguments (no shell). */
  command: string[];
  /** Kill the command after this long; the call then gets an `is_error` result (default 60 s, at most 600 s). */
  timeout_ms: number;
}

export const CUSTOM_TOOLS_LIMITS = {
  tools: 64,
  name: /^[a-zA-Z0-9_-]{1,64}$/,
  description: 1024,
  args: 64,
  defaultTimeoutMs: 60_000,
  maxTimeoutMs: 600_000,
  /** The result text a command may produce (stdout, else stderr) before it is cut. */
  maxOutputBytes: 100 * 1024,
} as const;

/** The six sandbox tools keep their names: a custom tool may not shadow them. */
const RESERVED = new Set(['bash', 'read', 'write', 'edit', 'glob', 'grep', 'web_fetch', 'web_search']);

/** A custom tools file that cannot be used: its message names the entry and the field. */
export class CustomToolsConfigError extends Error {}

const fail = (msg: string): never => {
  throw new CustomToolsConfigError(msg);
};

/**
 * Parses and validates the operator's custom tools file (JSON or YAML): `{tools: [...]}` or a bare list.
 * Every error names the offending entry and field; nothing partial is returned.
 */
export function parseCustomTools(text: string, source = 'custom tools'): CustomToolSpec[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    fail(`${source}: not valid JSON or YAML (${(err as Error).message.split('\n')[0]})`);
  }
  const list = Array.isArray(doc) ? doc : isObject(doc) && Array.isArray(doc.tools) ? doc.tools : undefined;
  if (!list) return fail(`${source}: expected {"tools": [...]} or a list of tools`);
  if (isObject(doc) && !Array.isArray(doc)) unknownKeys(doc, ['tools'], source);
  if (list.length > CUSTOM_TOOLS_LIMITS.tools)
    fail(`${source}: at most ${CUSTOM_TOOLS_LIMITS.tools} tools (got ${list.length})`);
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const at = `${source}: tools[${i}]`;
    if (!isObject(entry)) return fail(`${at} must be an object`);
    unknownKeys(entry, ['name', 'description', 'input_schema', 'command', 'timeout_ms'], at);
    const name = entry.name;
    if (typeof name !== 'string' || !CUSTOM_TOOLS_LIMITS.name.test(name))
      fail(`${at}.name must be 1-64 characters of letters, digits, _ and -`);
    const n = name as string;
    if (RESERVED.has(n)) fail(`${at}.name "${n}" is a built-in tool name`);
    if (seen.has(n)) fail(`${at}.name "${n}" is registered twice`);
    seen.add(n);
    const description = entry.description;
    if (
      typeof description !== 'string' ||
      !description.trim() ||
      description.length > CUSTOM_TOOLS_LIMITS.description
    )
      fail(
        `${at}.description must be a non-empty string of at most ${CUSTOM_TOOLS_LIMITS.description} characters`,
      );
    const schema = entry.input_schema;
    if (!isObject(schema) || schema.type !== 'object')
      fail(`${at}.input_schema must be a JSON Schema object with "type": "object"`);
    const command = entry.command;
    if (
      !Array.isArray(command) ||
      command.length < 1 ||
      command.length > CUSTOM_TOOLS_LIMITS.args ||
      !command.every((a) => typeof a === 'string' && !a.includes('\0'))
    )
      fail(
        `${at}.command must be a list of 1-${CUSTOM_TOOLS_LIMITS.args} strings (the executable, then its arguments)`,
      );
    if (!(command as string[])[0]!.startsWith('/'))
      fail(`${at}.command[0] must be an absolute path of an executable in the sandbox image`);
    let timeout: number = CUSTOM_TOOLS_LIMITS.defaultTimeoutMs;
    if (entry.timeout_ms !== undefined) {
      const t = entry.timeout_ms;
      if (typeof t !== 'number' || !Number.isInteger(t) || t < 100 || t > CUSTOM_TOOLS_LIMITS.maxTimeoutMs)
        fail(`${at}.timeout_ms must be an integer from 100 to ${CUSTOM_TOOLS_LIMITS.maxTimeoutMs}`);
      timeout = t as number;
    }
    return {
      name: n,
      description: description as string,
      input_schema: schema as Record<string, unknown>,
      command: command as string[],
      timeout_ms: timeout,
    };
  });
}

/**
 * The runner's tool for one spec: the command runs in the sandbox's workdir with the Bash tool's scrubbed
 * environment (no Mango credential), the call's input as JSON on stdin. Exit 0 → its stdout is the result;
 * otherwise (or on timeout) an `is_error` result with stdout/stderr. Output is capped.
 */
export function commandTool(spec: CustomToolSpec, ctx: { workdir: string; env?: NodeJS.ProcessEnv }): Tool {
  return {
    name: spec.name,
    run: (input, { signal }) => runCommand(spec, input, ctx, signal),
  };
}

async function runCommand(
  spec: CustomToolSpec,
  input: Record<string, unknown>,
  ctx: { workdir: string; env?: NodeJS.ProcessEnv },
  outer: AbortSignal,
): Promise<string> {
  const timeout = AbortSignal.timeout(spec.timeout_ms);
  const signal = AbortSignal.any([outer, timeout]);
  const env = shellEnv(ctx.env ?? { PATH: '/usr/local/bin:/usr/bin:/bin' });
  const cap = CUSTOM_TOOLS_LIMITS.maxOutputBytes;
  return new Promise<string>((resolve, reject) => {
    const child = spawn(spec.command[0]!, spec.command.slice(1), {
      cwd: ctx.workdir,
      env: { ...env, MANGO_CUSTOM_TOOL: spec.name },
      stdio: ['pipe', 'pipe', 'pipe'],
      signal,
      killSignal: 'SIGKILL',
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    child.stdout.on('data', (b: Buffer) => {
      if (outBytes < cap) out.push(b);
      outBytes += b.length;
    });
    child.stderr.on('data', (b: Buffer) => {
      if (errBytes < cap) err.push(b);
      errBytes += b.length;
    });
    child.stdin.on('error', () => undefined); // a command that does not read its input
    child.stdin.end(JSON.stringify(input));
    const text = (bufs: Buffer[], total: number) => {
      const s = Buffer.concat(bufs).subarray(0, cap).toString('utf8');
      return total > cap ? `${s}\n[output truncated at ${cap} bytes]` : s;
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.name === 'AbortError')
        return reject(
          new ToolError(
            timeout.aborted
              ? `Error: ${spec.name} did not finish within ${spec.timeout_ms} ms and was killed`
              : `Error: ${spec.name} was cancelled`,
          ),
        );
      reject(new ToolError(`Error: ${spec.name} could not be started: ${e.code ?? e.message}`));
    });
    child.on('close', (code, sig) => {
      if (signal.aborted) return; // reported by 'error'
      const stdout = text(out, outBytes);
      if (code === 0) return resolve(stdout);
      const stderr = text(err, errBytes);
      reject(
        new ToolError(
          [
            `Error: ${spec.name} exited with ${code !== null ? `code ${code}` : `signal ${sig}`}`,
            stdout,
            stderr,
          ]
            .filter((s) => s.trim())
            .join('\n'),
        ),
      );
    });
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unknownKeys(o: Record<string, unknown>, allowed: string[], at: string): void {
  const extra = Object.keys(o).find((k) => !allowed.includes(k));
  if (extra) fail(`${at}: unknown field "${extra}" (allowed: ${allowed.join(', ')})`);
}

/** Reads and validates the operator's file (the supervisor's start): a clear error, never a partial list. */
export async function loadCustomTools(path: string): Promise<CustomToolSpec[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CustomToolsConfigError(
      `MANGO_WORKER_CUSTOM_TOOLS: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  return parseCustomTools(text, `MANGO_WORKER_CUSTOM_TOOLS ${path}`);
}
