import Docker from 'dockerode';

/** Every Docker API request Mango makes is bounded (each its own 15-second bound: docs/operator-guide.md "The Docker supervisor"). */
export const DOCKER_REQUEST_TIMEOUT_MS = 15_000;

export interface DockerEngineInfo {
  version: string;
  apiVersion: string;
  os: string;
  arch: string;
}

/**
 * A dockerode client for `DOCKER_HOST` (unix:///path or tcp://host:port), or the default socket. Control
 * requests are bounded (15 s); pass `timeoutMs: 0` for the long-lived attach/wait streams.
 */
export function createDockerClient(dockerHost?: string, options: { timeoutMs?: number } = {}): Docker {
  const timeout = options.timeoutMs ?? DOCKER_REQUEST_TIMEOUT_MS;
  const bound = timeout > 0 ? { timeout } : {};
  if (!dockerHost) return new Docker(bound);
  const url = new URL(dockerHost);
  if (url.protocol === 'unix:') return new Docker({ socketPath: url.pathname, ...bound });
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http', ...bound });
}

/**
 * The precompiled item runner an image declares (`ENV MANGO_ITEM_ENTRY=/opt/mango/dist/item-runner/…/item-runner.js`,
 * set by the image builds), or undefined when the image only has the TypeScript sources.
 */
export async function imageItemEntry(docker: Docker, image: string): Promise<string | undefined> {
  const info = await docker.getImage(image).inspect();
  const line = (info.Config?.Env ?? []).find((e) => e.startsWith('MANGO_ITEM_ENTRY='));
  const entry = line?.slice('MANGO_ITEM_ENTRY='.length);
  return entry && entry.startsWith('/') ? entry : undefined;
}

export async function engineInfo(docker: Docker): Promise<DockerEngineInfo> {
  const v = await docker.version();
  return { version: v.Version, apiVersion: v.ApiVersion, os: v.Os, arch: v.Arch };
}
