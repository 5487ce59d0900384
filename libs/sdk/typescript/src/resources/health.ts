import { HttpClient, RequestOptions } from '../core';
import type { HealthStatus, Readiness } from '../types';

/** `client.health` — unauthenticated probes (the credential is sent but not required). */
export class Health {
  constructor(private readonly http: HttpClient) {}

  /** `GET /healthz` — 200 while the process serves HTTP. */
  liveness(options?: RequestOptions): Promise<HealthStatus> {
    return this.http.request({ method: 'GET', path: '/healthz', options });
  }

  /**
   * `GET /readyz` — resolves with `{status:"ok"}` or, on 503, with `{status:"unavailable", checks}`
   * naming the failed check (not thrown, not retried).
   */
  readiness(options?: RequestOptions): Promise<Readiness> {
    return this.http.request({
      method: 'GET',
      path: '/readyz',
      options,
      acceptStatuses: [503],
    });
  }
}
