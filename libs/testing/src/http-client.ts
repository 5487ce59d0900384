import { assertMatchesContract } from './openapi-contract';

export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * A raw HTTP client for tests: sends JSON, returns status/body/headers and checks every response
 * against openapi.yaml (unless `contract: false`, for routes deliberately outside the contract).
 */
export function httpClient(
  baseUrl: string,
  credential?: string,
  options: { header?: 'bearer' | 'x-api-key' } = {},
) {
  async function request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    extra: { headers?: Record<string, string>; raw?: string; contract?: boolean } = {},
  ): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { ...extra.headers };
    if (credential) {
      if (options.header === 'x-api-key') headers['x-api-key'] = credential;
      else headers.authorization = `Bearer ${credential}`;
    }
    let payload: string | undefined = extra.raw;
    if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] = headers['content-type'] ?? 'application/json';
    const res = await fetch(baseUrl + path, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    if (text.length > 0 && (res.headers.get('content-type') ?? '').includes('json'))
      parsed = JSON.parse(text);
    if (text.length === 0) parsed = undefined;
    if (extra.contract !== false)
      assertMatchesContract(method, new URL(baseUrl + path).pathname, res.status, parsed);
    return { status: res.status, body: parsed as T, headers: res.headers };
  }
  return {
    get: <T = any>(path: string, extra?: Parameters<typeof request>[3]) =>
      request<T>('GET', path, undefined, extra),
    post: <T = any>(path: string, body?: unknown, extra?: Parameters<typeof request>[3]) =>
      request<T>('POST', path, body, extra),
    delete: <T = any>(path: string, extra?: Parameters<typeof request>[3]) =>
      request<T>('DELETE', path, undefined, extra),
    request,
  };
}

export type HttpClient = ReturnType<typeof httpClient>;
