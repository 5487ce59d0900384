/**
 * Fair-use limits raised out of reach for the benches (docs/operator-guide.md "Fair use"): a bench
 * measures what one process can do for one Workspace (thousands of Poll/Ack per second, 10,000 streams,
 * every Session running at once), which the per-Workspace defaults rightly refuse. The limiter stays on,
 * so its per-request cost is still in the figures.
 */
export const BENCH_FAIR_USE_ENV: Record<string, string> = {
  MANGO_RATE_LIMIT_WORKSPACE_RPS: '1000000',
  MANGO_RATE_LIMIT_WORKSPACE_BURST: '10000000',
  MANGO_RATE_LIMIT_KEY_RPS: '1000000',
  MANGO_RATE_LIMIT_KEY_BURST: '10000000',
  MANGO_RATE_LIMIT_WORK_TOKEN_RPS: '1000000',
  MANGO_RATE_LIMIT_WORK_TOKEN_BURST: '10000000',
  MANGO_MAX_SSE_STREAMS_PER_WORKSPACE: '1000000',
  MANGO_MAX_SSE_STREAMS_PER_KEY: '1000000',
  MANGO_MAX_RUNNING_SESSIONS_PER_WORKSPACE: '10000000',
};
