import { writeFileSync } from 'node:fs';
import WebSocket from 'ws';
import { inspectorUrl } from './collect-garbage';

/** A CPU profile being recorded in a process started with INSPECTOR_NODE_OPTIONS; `stop` writes it. */
export interface CpuProfiling {
  /** Stops the profiler and writes the `.cpuprofile` (Chrome DevTools / speedscope format) to `path`. */
  stop(path: string): Promise<void>;
}

/**
 * Starts V8's sampling profiler (Profiler.start over the inspector, `intervalUs` between samples) in a
 * process started with INSPECTOR_NODE_OPTIONS, so a benchmark profiles one phase only (not boot).
 */
export async function startCpuProfile(logs: string, intervalUs = 200): Promise<CpuProfiling> {
  const socket = new WebSocket(inspectorUrl(logs));
  let next = 1;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  socket.on('message', (data) => {
    const answer = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = answer.id === undefined ? undefined : pending.get(answer.id);
    if (!waiter) return;
    pending.delete(answer.id!);
    if (answer.error) waiter.reject(new Error(answer.error.message));
    else waiter.resolve(answer.result);
  });
  const send = (method: string, params?: unknown) =>
    new Promise<any>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: intervalUs });
  await send('Profiler.start');
  return {
    stop: async (path) => {
      try {
        const { profile } = (await send('Profiler.stop')) as { profile: unknown };
        writeFileSync(path, JSON.stringify(profile));
      } finally {
        socket.close();
      }
    },
  };
}
