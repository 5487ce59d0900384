import { Readable } from 'node:stream';

/** A Skill version's metadata as apps/files serves it (the fields staging needs). */
export interface RemoteSkillVersion {
  skill_id: string;
  version: string;
  name: string;
  directory: string;
  archive_size_bytes: number;
  archive_sha256: string;
  expanded_size_bytes: number;
  file_count: number;
}

/** The two Skill routes a Work token may use: a pinned version's metadata and its archive. */
export interface SkillsApi {
  getVersion(skillId: string, version: string, signal?: AbortSignal): Promise<RemoteSkillVersion>;
  /** The archive bytes as a stream (the caller verifies length and digest). */
  openContent(skillId: string, version: string, signal?: AbortSignal): Promise<Readable>;
}

/** A refused or failed Skills request: HTTP status (0 for a network failure) and the envelope's type. */
export class SkillsApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    message: string,
  ) {
    super(status ? `${status} ${errorType}: ${message}` : message);
    this.name = 'SkillsApiError';
  }
}

/**
 * `SkillsApi` over HTTP with the Work token (the same base URL as the API: the ingress routes
 * `/v1/skills*` to apps/files). No retries here (staging retries). Metadata calls are bounded by
 * `timeoutMs`; a download only by the caller's signal. The token is never logged or put into an error.
 */
export class HttpSkillsApi implements SkillsApi {
  private readonly base: string;

  constructor(
    private readonly opts: { baseUrl: string; token: string; timeoutMs?: number; fetch?: typeof fetch },
  ) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
  }

  private async send(path: string, signal: AbortSignal | undefined, bounded: boolean): Promise<Response> {
    const timeout = bounded ? AbortSignal.timeout(this.opts.timeoutMs ?? 15_000) : undefined;
    const signals = [signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    let res: Response;
    try {
      res = await (this.opts.fetch ?? fetch)(this.base + path, {
        headers: { authorization: `Bearer ${this.opts.token}` },
        signal: signals.length ? AbortSignal.any(signals) : undefined,
      });
    } catch (err) {
      throw new SkillsApiError(0, 'connection_error', `GET ${path} failed: ${(err as Error).message}`);
    }
    if (res.status >= 200 && res.status < 300) return res;
    const text = await res.text().catch(() => '');
    let parsed: { error?: { type?: string; message?: string } } | undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    throw new SkillsApiError(
      res.status,
      parsed?.error?.type ?? 'unknown',
      parsed?.error?.message ?? `GET ${path}: HTTP ${res.status}`,
    );
  }

  private path(skillId: string, version: string): string {
    return `/v1/skills/${encodeURIComponent(skillId)}/versions/${encodeURIComponent(version)}`;
  }

  async getVersion(skillId: string, version: string, signal?: AbortSignal): Promise<RemoteSkillVersion> {
    const res = await this.send(this.path(skillId, version), signal, true);
    return (await res.json()) as RemoteSkillVersion;
  }

  async openContent(skillId: string, version: string, signal?: AbortSignal): Promise<Readable> {
    const res = await this.send(`${this.path(skillId, version)}/content`, signal, false);
    if (!res.body) throw new SkillsApiError(res.status, 'empty_body', 'the archive response has no body');
    return Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
  }
}
