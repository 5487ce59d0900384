import { ConfigError } from '@mango/platform-config';

/**
 * Entry-point wrapper shared by every app: a configuration error prints the list of bad variables and
 * exits 2; any other boot failure exits 1. SIGTERM and SIGINT close the app (Nest shutdown hooks run) and exit 0,
 * also when they arrive during boot (the app closes as soon as it is up).
 */
export function runMain(service: string, start: () => Promise<{ close(): Promise<void> }>): void {
  // Signal handlers go in before boot: a SIGTERM that arrives while the app is still starting (an
  // orchestrator may send one at any time) is kept and honoured as soon as the app is up.
  let running: { close(): Promise<void> } | undefined;
  let requested: NodeJS.Signals | undefined;
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (!running) {
      requested ??= signal;
      return;
    }
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${JSON.stringify({ level: 'info', service, msg: `${signal}: shutting down` })}\n`);
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(
          `${JSON.stringify({ level: 'error', service, msg: 'shutdown failed', err: String(err) })}\n`,
        );
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  start()
    .then((app) => {
      running = app;
      if (requested) stop(requested);
    })
    .catch((err: unknown) => {
      if (err instanceof ConfigError) {
        process.stderr.write(
          `${JSON.stringify({ level: 'fatal', service, msg: err.message, problems: err.problems })}\n`,
        );
        process.exit(2);
      }
      process.stderr.write(
        `${JSON.stringify({ level: 'fatal', service, msg: 'boot failed', err: String((err as Error)?.stack ?? err) })}\n`,
      );
      process.exit(1);
    });
}
