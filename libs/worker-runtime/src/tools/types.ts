/** A tool call as the Session delivered it (`agent.tool_use`). Its `id` lets a tool make side effects idempotent. */
export interface ToolUse {
  id: string;
  name: string;
  input: unknown;
  session_thread_id?: string | null;
}

export interface ToolRunContext {
  /** Aborted on the runner deadline, cancellation or lease loss. */
  signal: AbortSignal;
  /** The original `agent.tool_use` event. */
  toolUse: ToolUse;
}

/** A directory the file tools may touch besides the workdir (attached Memory Store roots). */
export interface ToolRoot {
  path: string;
  readOnly: boolean;
}

export interface ToolsetContext {
  /** `/workspace` in the container. */
  workdir: string;
  /** Extra permitted roots, e.g. `/mnt/memory/<store>`; `readOnly` roots refuse write and edit. */
  roots?: ToolRoot[];
  /** Size cap of read and edit (see docs/capabilities.md: 64 KiB). */
  maxFileBytes?: number;
  /** The shell's base environment (an allowlist; Mango credentials are scrubbed from it regardless). */
  env?: NodeJS.ProcessEnv;
}

export interface Tool {
  name: string;
  /** Returns the text result; throws ToolError (its message is the result text) for a tool failure. */
  run(input: Record<string, unknown>, ctx: ToolRunContext): Promise<string>;
  close?(): Promise<void>;
}

/** A tool failure whose message is shown to the model as an `is_error` result. */
export class ToolError extends Error {}

export const DEFAULT_MAX_FILE_BYTES = 64 * 1024;
