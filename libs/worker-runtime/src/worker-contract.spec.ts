import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_OUTPUT_LIMIT_CHARS,
  DEFAULT_MAX_CONCURRENT_CALLS,
  READ_VIEW_RANGE_ABOVE_BYTES,
  TOOL_TIMEOUT_MS,
} from './worker-contract';

/** The defaults are the figures of the worker contract of December 2026 (docs/worker-contract.md). */
describe('worker contract defaults', () => {
  it('bash 295 s, a tool call 325 s, output cut at 30,000 characters, read asks a view_range above 110,000 bytes, one call at a time', () => {
    expect(BASH_DEFAULT_TIMEOUT_MS).toBe(295_000);
    expect(TOOL_TIMEOUT_MS).toBe(325_000);
    expect(BASH_OUTPUT_LIMIT_CHARS).toBe(30_000);
    expect(READ_VIEW_RANGE_ABOVE_BYTES).toBe(110_000);
    expect(DEFAULT_MAX_CONCURRENT_CALLS).toBe(1);
    // A bash command's own bound ends before the runner's bound of the call.
    expect(BASH_DEFAULT_TIMEOUT_MS).toBeLessThan(TOOL_TIMEOUT_MS);
  });
});
