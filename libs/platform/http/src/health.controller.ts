import { Controller, Get, Inject, Optional, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from './public.decorator';
import { checkDatabase } from './readiness';

/** Additional bounded dependencies an app must reach to be ready (e.g. the object store). */
export interface ReadinessCheck {
  name: string;
  check(): Promise<string>;
}
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

/** `/healthz`: the process is alive. `/readyz`: it can serve, i.e. PostgreSQL answers and is writable. */
@Controller()
export class HealthController {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Optional() @Inject(READINESS_CHECKS) private readonly extra: ReadinessCheck[] = [],
  ) {}

  @Public()
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Public()
  @Get('readyz')
  async readyz(
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ status: string; checks: Record<string, string> }> {
    const results = await Promise.all([
      checkDatabase(this.dataSource).then((r) => ['database', r] as const),
      ...this.extra.map((c) => c.check().then((r) => [c.name, r] as const)),
    ]);
    const checks = Object.fromEntries(results);
    if (results.some(([, r]) => r !== 'ok')) {
      res.status(503);
      return { status: 'unavailable', checks };
    }
    return { status: 'ok', checks };
  }
}
