import { spawn, ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './app-process';

/** A toxic of Toxiproxy's HTTP API (https://github.com/Shopify/toxiproxy#toxics). */
export interface Toxic {
  name: string;
  type: 'latency' | 'bandwidth' | 'slow_close' | 'timeout' | 'reset_peer' | 'slicer' | 'limit_data';
  stream?: 'upstream' | 'downstream';
  toxicity?: number;
  attributes: Record<string, number>;
}

export interface ToxiproxyLink {
  /** Where clients connect: `http://127.0.0.1:<port>`. */
  url: string;
  addToxic(toxic: Toxic): Promise<void>;
  removeToxic(name: string): Promise<void>;
  /** Disabling closes every connection through the link and refuses new ones until enabled again. */
  setEnabled(enabled: boolean): Promise<void>;
}

export interface Toxiproxy {
  /** A proxy from a fresh 127.0.0.1 port to `upstream` (`127.0.0.1:<port>`). */
  link(name: string, upstream: string): Promise<ToxiproxyLink>;
  stop(): Promise<void>;
}

/** The toxiproxy-server that `tools/ci/services.sh install toxiproxy` builds from its Go module. */
export function toxiproxyBin(): string {
  const bin =
    process.env.MANGO_TOXIPROXY_BIN ??
    join(
      process.env.MANGO_SERVICES_CACHE ?? join(homedir(), '.cache/mango-services'),
      'bin/toxiproxy-server',
    );
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run bash tools/ci/services.sh install toxiproxy`);
  return bin;
}

/** Starts a real Toxiproxy server (a TCP fault proxy) on a free 127.0.0.1 port. */
export async function startToxiproxy(): Promise<Toxiproxy> {
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(toxiproxyBin(), ['-host', '127.0.0.1', '-port', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(api + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`toxiproxy ${method} ${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`toxiproxy-server exited ${child.exitCode}: ${stderr}`);
    try {
      await call('GET', '/version');
      break;
    } catch (e) {
      if (i > 200) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    async link(name, upstream) {
      const listen = await freePort();
      await call('POST', '/proxies', { name, listen: `127.0.0.1:${listen}`, upstream, enabled: true });
      return {
        url: `http://127.0.0.1:${listen}`,
        addToxic: async (toxic) =>
          void (await call('POST', `/proxies/${name}/toxics`, { toxicity: 1, ...toxic })),
        removeToxic: async (toxic) => void (await call('DELETE', `/proxies/${name}/toxics/${toxic}`)),
        setEnabled: async (enabled) => void (await call('POST', `/proxies/${name}`, { enabled })),
      };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
