import WebSocket from 'ws';

/**
 * Starts a Node process with its inspector on a free loopback port (pass as its NODE_OPTIONS), so that
 * {@link collectGarbage} can ask it for a full garbage collection before a memory sample.
 */
export const INSPECTOR_NODE_OPTIONS = '--inspect=127.0.0.1:0';

/** The inspector's WebSocket URL: the last one the process's log names. */
export function inspectorUrl(logs: string): string {
  const url = [...logs.matchAll(/Debugger listening on (ws:\/\/\S+)/g)].at(-1)?.[1];
  if (!url) throw new Error('the process has no inspector');
  return url;
}

/** The V8 heap after a collection (Runtime.getHeapUsage), bytes. */
export interface HeapUsage {
  usedSize: number;
  totalSize: number;
}

/**
 * A full GC (HeapProfiler.collectGarbage) in a process started with {@link INSPECTOR_NODE_OPTIONS}: its RSS
 * sampled afterwards is what the process retains, not garbage a loaded machine has not collected yet.
 * Answers the V8 heap right after it. The inspector's URL is the last one the process's log names.
 */
export async function collectGarbage(logs: string): Promise<HeapUsage> {
  const url = inspectorUrl(logs);
  const socket = new WebSocket(url);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<HeapUsage>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the inspector at ${url}`)), 20_000);
      socket.once('open', () => {
        socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
        socket.send(JSON.stringify({ id: 2, method: 'Runtime.getHeapUsage' }));
      });
      socket.on('message', (data) => {
        const answer = JSON.parse(String(data)) as { id?: number; result?: HeapUsage };
        if (answer.id === 2)
          resolve({ usedSize: answer.result!.usedSize, totalSize: answer.result!.totalSize });
      });
      socket.once('error', reject);
    });
  } finally {
    clearTimeout(timer);
    socket.close();
  }
}
