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
  /** Size cap of edit (see docs/capabilities.md: 64 KiB). */
  maxFileBytes?: number;
  /** Above this size `read` asks for a `view_range` (docs/worker-contract.md: 110,000 bytes). */
  readViewRangeAboveBytes?: number;
  /** `bash`: a command's bound when the call passes no `timeout_ms` (the contract: 295 s). */
  bashTimeoutMs?: number;
  /** `bash`: characters a result carries before the output is cut and spilled (the contract: 30,000). */
  bashOutputLimitChars?: number;
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
