/*
 * The worker contract of December 2026 (issue #38; docs/worker-contract.md): the figures the reference
 * worker and tool runner use since SDK 1.16.0, in one leaf module so that the tools, the runner and the
 * item options share them and one unit test pins them. Each is a default: the tools and the runner take
 * their own value as a parameter (the tests use small ones).
 */

/** `bash`: how long one command may run when the call does not pass `timeout_ms` (was 120 s). */
export const BASH_DEFAULT_TIMEOUT_MS = 295_000;

/** The runner's bound on one tool call, whatever the tool (was 120 s). Above the bash default. */
export const TOOL_TIMEOUT_MS = 325_000;

/**
 * `bash`: the result carries stdout then stderr cut at this many characters; the whole output is written
 * to a file in the Session's workspace whose path the result names (readable with `read`).
 */
export const BASH_OUTPUT_LIMIT_CHARS = 30_000;

/** `read`: a file above this many bytes is refused without a `view_range` (a clear tool error). */
export const READ_VIEW_RANGE_ABOVE_BYTES = 110_000;

/** How many calls of different Threads one activation may run at once (calls of one Thread run in order). */
export const DEFAULT_MAX_CONCURRENT_CALLS = 1;

/** Where `bash` spills a cut output, relative to the workdir (inside the Session's workspace). */
export const BASH_SPILL_DIR = '.mango/bash-output';
