import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clearLine, createInterface, cursorTo } from 'node:readline';
import { parseEnv } from 'node:util';
import { MangoClient, MangoError, RequestAbortedError } from '@mango/sdk';
import type { SessionEvent, SessionEventParams } from '@mango/sdk';

/** Where `mango sessions …` finds the API: flags, then the environment, then `.mango/local.env`. */
export interface Connection {
  baseUrl: string;
  apiKey: string;
}

export function resolveConnection(
  flags: { baseUrl?: string; apiKey?: string },
  env: Record<string, string | undefined>,
  cwd: string,
): Connection {
  const file = join(cwd, '.mango/local.env');
  const local: Record<string, string | undefined> = existsSync(file)
    ? parseEnv(readFileSync(file, 'utf8'))
    : {};
  const baseUrl = flags.baseUrl ?? env.MANGO_BASE_URL ?? local.MANGO_BASE_URL;
  const apiKey = flags.apiKey ?? env.MANGO_API_KEY ?? local.MANGO_API_KEY;
  if (!baseUrl || !apiKey)
    throw new UsageError(
      'no API to talk to: pass --base-url and --api-key, set MANGO_BASE_URL and MANGO_API_KEY, or run `npm run up` (it writes .mango/local.env)',
    );
  return { baseUrl, apiKey };
}

export class UsageError extends Error {}

/** Exit codes of `mango sessions connect`. */
export const EXIT = { ok: 0, failed: 1, uncertainWrite: 3 } as const;

type Status = 'idle' | 'running' | 'rescheduling' | 'terminated' | 'awaiting approval';

interface Terminal {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

const RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 4000, 5000];
const MAX_RECONNECT_FAILURES = 30;

/**
 * `mango sessions connect`: a line interface to one Session (docs/api-guide.md, `mango sessions connect`).
 * It prints the history, follows the live stream (resuming with Last-Event-ID), keeps a status prompt
 * (`[running] ›`, `[idle] ›`, `[awaiting approval] ›`), sends each typed line as a `user.message`,
 * interrupts on Ctrl-C or `/interrupt`, and answers pending approvals with `/allow` and `/deny` — for the
 * primary Thread and for child calls relayed with their `session_thread_id`. After a read disconnect it
 * re-lists the history and prints what it missed before following again. A write whose outcome is
 * unknown (no response, a timeout, a 5xx) is never retried: the command stops with exit code 3.
 * Terminal handling is Node's readline (line editing, history, prompt redraw).
 */
export async function connectSession(
  conn: Connection,
  sessionId: string,
  term: Terminal = { input: process.stdin, output: process.stdout },
): Promise<number> {
  // Writes are sent once (maxRetries 0): an uncertain outcome must not become a duplicate.
  const client = new MangoClient({ baseUrl: conn.baseUrl, apiKey: conn.apiKey, maxRetries: 0 });
  const rl = createInterface({ input: term.input, output: term.output, terminal: true, historySize: 200 });
  const seen = new Set<string>();
  const pending = new Map<string, { name: string; threadId?: string }>();
  let status: Status = 'idle';
  let lastSeq = 0;
  let finished: ((code: number) => void) | undefined;
  const done = new Promise<number>((resolve) => (finished = resolve));
  const reader = new AbortController();
  let exitCode: number | undefined;

  const print = (line: string) => {
    // Redraws the prompt and whatever the user was typing below the new line.
    clearLine(term.output, 0);
    cursorTo(term.output, 0);
    term.output.write(`${line}\n`);
    if (exitCode === undefined) rl.prompt(true);
  };
  const setStatus = (next: Status) => {
    const shown = next === 'idle' && pending.size ? 'awaiting approval' : next;
    rl.setPrompt(`[${shown}${shown === 'awaiting approval' ? ` ${pending.size}` : ''}] › `);
    if (shown !== status)
      print(
        `-- status: ${shown}${shown === 'awaiting approval' ? ` (${[...pending.keys()].join(', ')}; /allow or /deny)` : ''}`,
      );
    status = shown;
  };
  /** Ends the connection; `line` is printed last, without a prompt after it. */
  const stop = (code: number, line?: string) => {
    if (exitCode !== undefined) return;
    exitCode = code;
    if (line) print(line);
    reader.abort();
    rl.close();
    finished!(code);
  };

  const show = (e: SessionEvent) => {
    if (seen.has(e.id)) return;
    seen.add(e.id);
    // The SDK types only some event kinds; the line interface reads every kind the API sends.
    const ev = e as unknown as { type: string; id: string } & Record<string, any>;
    const thread = ev.session_thread_id ? ` (thread ${ev.session_thread_id})` : '';
    switch (ev.type) {
      case 'user.message':
        return print(`you: ${textOf(ev.content)}`);
      case 'agent.message':
        return print(`agent${thread}: ${textOf(ev.content)}`);
      case 'agent.tool_use':
      case 'agent.custom_tool_use':
      case 'agent.mcp_tool_use': {
        const perm = ev.evaluated_permission ? ` [${ev.evaluated_permission}]` : '';
        if (ev.evaluated_permission === 'ask')
          pending.set(ev.id, { name: ev.name, threadId: ev.session_thread_id });
        return print(`tool ${ev.name}${perm}${thread} ${ev.id}: ${clip(JSON.stringify(ev.input ?? {}))}`);
      }
      case 'user.tool_confirmation':
        pending.delete(ev.tool_use_id);
        return print(
          `${ev.result === 'allow' ? 'allowed' : 'denied'} ${ev.tool_use_id}${ev.deny_message ? `: ${ev.deny_message}` : ''}`,
        );
      case 'user.tool_result':
      case 'user.custom_tool_result':
        return print(`result${ev.is_error ? ' (error)' : ''}: ${clip(textOf(ev.content))}`);
      case 'user.interrupt':
        pending.clear();
        return print('-- interrupted');
      case 'session.status_running':
        return setStatus('running');
      case 'session.status_rescheduled':
        return setStatus('rescheduling');
      case 'session.status_idle': {
        const reason = ev.stop_reason?.type;
        if (reason === 'requires_action')
          for (const id of ev.stop_reason.event_ids ?? [])
            if (!pending.has(id)) pending.set(id, { name: '?' });
        if (reason && reason !== 'end_turn' && reason !== 'requires_action')
          print(`-- turn ended: ${reason}`);
        return setStatus('idle');
      }
      case 'session.status_terminated':
        setStatus('terminated');
        return stop(EXIT.ok, '-- the Session is terminated');
      case 'session.deleted':
        return stop(EXIT.ok, '-- the Session was deleted');
      case 'session.error':
        return print(`-- error: ${ev.error?.message ?? 'unknown'}`);
      default:
        return; // spans, usage and other bookkeeping stay off the line interface
    }
  };

  /** Lists the whole history and shows what is new; the history's length is the last sequence. */
  const reconcile = async () => {
    let n = 0;
    for await (const e of client.sessions.events.list(sessionId, { limit: 1000 })) {
      n++;
      show(e);
    }
    lastSeq = Math.max(lastSeq, n);
  };

  /** One write, never retried: 4xx is a definite refusal; anything else leaves the outcome unknown. */
  const send = async (events: unknown[], what: string): Promise<boolean> => {
    try {
      await client.sessions.events.send(
        sessionId,
        { events: events as SessionEventParams[] },
        { maxRetries: 0 },
      );
      return true;
    } catch (err) {
      if (err instanceof MangoError && err.status !== undefined && err.status < 500) {
        print(`-- ${what} refused (${err.status} ${err.type}): ${err.message}`);
        return false;
      }
      stop(
        EXIT.uncertainWrite,
        `-- ${what}: outcome unknown (${err instanceof Error ? err.message : String(err)}); not retried. ` +
          'Reconnect and check the history before sending it again.',
      );
      return false;
    }
  };

  const interrupt = async () => {
    if (await send([{ type: 'user.interrupt' }], 'interrupt')) print('-- interrupt sent');
  };

  const answer = async (result: 'allow' | 'deny', args: string[]) => {
    // `/allow [id]`, `/deny [id] [message…]`: without an id, the one pending call.
    const named = args[0]?.startsWith('sevt_') ? args[0] : undefined;
    const rest = named ? args.slice(1) : args;
    const id = named ?? (pending.size === 1 ? [...pending.keys()][0] : undefined);
    if (!id) {
      print(
        pending.size ? `-- name the call: ${[...pending.keys()].join(', ')}` : '-- nothing awaits approval',
      );
      return;
    }
    const call = pending.get(id);
    const message = result === 'deny' && rest.length ? rest.join(' ') : undefined;
    await send(
      [
        {
          type: 'user.tool_confirmation',
          tool_use_id: id,
          result,
          ...(message ? { deny_message: message } : {}),
          ...(call?.threadId ? { session_thread_id: call.threadId } : {}),
        },
      ],
      result === 'allow' ? 'approval' : 'denial',
    );
  };

  const onLine = async (line: string) => {
    const text = line.trim();
    if (!text) return rl.prompt();
    const [cmd, ...args] = text.split(/\s+/);
    switch (cmd) {
      case '/quit':
      case '/exit':
        return stop(EXIT.ok);
      case '/interrupt':
        return interrupt();
      case '/allow':
        return answer('allow', args);
      case '/deny':
        return answer('deny', args);
      case '/status':
        return print(
          `-- status: ${status}${pending.size ? `; pending: ${[...pending.keys()].join(', ')}` : ''}`,
        );
      case '/help':
        return print(
          '-- type a message and press Enter; /allow [id], /deny [id] [message], /interrupt (or Ctrl-C), /status, /quit (or Ctrl-D)',
        );
      default:
        if (cmd!.startsWith('/')) return print(`-- unknown command ${cmd} (/help)`);
        await send([{ type: 'user.message', content: [{ type: 'text', text: line }] }], 'message');
    }
  };

  // Input: lines in order (a write finishes before the next line is sent).
  let queue = Promise.resolve();
  rl.on('line', (line) => (queue = queue.then(() => onLine(line)).catch(() => undefined)));
  let lastCtrlC = 0;
  rl.on('SIGINT', () => {
    if (status === 'running' || status === 'rescheduling') {
      queue = queue.then(interrupt).catch(() => undefined);
      return;
    }
    if (Date.now() - lastCtrlC < 2000) return stop(EXIT.ok);
    lastCtrlC = Date.now();
    print('-- nothing is running; Ctrl-C again (or /quit, Ctrl-D) leaves');
  });
  rl.on('close', () => stop(exitCode ?? EXIT.ok));

  try {
    const session = await client.sessions.retrieve(sessionId);
    print(`connected to ${session.id}${session.title ? ` "${session.title}"` : ''} (/help for commands)`);
    status = session.status as Status;
    rl.setPrompt(`[${status}] › `);
    await reconcile();
    setStatus(session.status === 'running' ? 'running' : (status as Status));
  } catch (err) {
    stop(EXIT.failed, `-- cannot open ${sessionId}: ${err instanceof Error ? err.message : String(err)}`);
    return done;
  }
  void follow();
  return done;

  async function follow() {
    let failures = 0;
    while (exitCode === undefined) {
      try {
        for await (const { id, event } of client.sessions.events.stream(sessionId, {
          lastEventId: lastSeq ? String(lastSeq) : undefined,
          signal: reader.signal,
        })) {
          failures = 0;
          lastSeq = Math.max(lastSeq, Number(id));
          show(event);
        }
        if (exitCode === undefined) throw new Error('the stream ended');
      } catch (err) {
        if (exitCode !== undefined || err instanceof RequestAbortedError) return;
        failures++;
        if (failures === 1)
          print(`-- stream lost (${err instanceof Error ? err.message : String(err)}); reconnecting`);
        if (failures > MAX_RECONNECT_FAILURES) {
          return stop(EXIT.failed, '-- could not reconnect; giving up');
        }
        await new Promise((r) =>
          setTimeout(r, RECONNECT_DELAYS_MS[Math.min(failures - 1, RECONNECT_DELAYS_MS.length - 1)]),
        );
        try {
          const before = seen.size;
          await reconcile();
          print(`-- reconnected; history reconciled (${seen.size - before} missed event(s))`);
          failures = 0;
        } catch {
          // still down: try again
        }
      }
    }
  }
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((b: { type?: string; text?: string; title?: string }) =>
      b.type === 'text' ? (b.text ?? '') : `[${b.type}${b.title ? ` ${b.title}` : ''}]`,
    )
    .join(' ');
}

function clip(s: string, max = 200): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max)}…` : one;
}
