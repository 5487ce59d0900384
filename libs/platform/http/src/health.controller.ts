import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from './public.decorator';
import { checkDatabase } from './readiness';

/** `/healthz`: the process is alive. `/readyz`: it can serve, i.e. PostgreSQL answers and is writable. */
@Controller()
export class HealthController {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  @Public()
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Public()
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) res: Response): Promise<{ status: string; checks: { database: string } }> {
    const database = await checkDatabase(this.dataSource);
    if (database !== 'ok') {
      res.status(503);
      return { status: 'unavailable', checks: { database } };
    }
    return { status: 'ok', checks: { database } };
  }
}
