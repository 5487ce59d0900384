import { rmSync } from 'node:fs';

/** Removes the workflow bundle global-setup.ts built for this run. */
export default async function globalTeardown(): Promise<void> {
  const dir = process.env.MANGO_TEST_WORKFLOW_BUNDLE_DIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
