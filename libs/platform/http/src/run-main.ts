import { ConfigError } from '@mango/platform-config';

/**
 * Entry-point wrapper shared by every app: a configuration error prints the list of bad variables and
 * exits 2; any other boot failure exits 1. Shutdown signals are handled by each app's Nest hooks.
 */
export function runMain(service: string, start: () => Promise<unknown>): void {
  start().catch((err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${JSON.stringify({ level: 'fatal', service, msg: err.message, problems: err.problems })}\n`);
      process.exit(2);
    }
    process.stderr.write(`${JSON.stringify({ level: 'fatal', service, msg: 'boot failed', err: String((err as Error)?.stack ?? err) })}\n`);
    process.exit(1);
  });
}
