import { Controller, Get, Headers, Param, Query, Req, Res } from '@nestjs/common';
import { AllowCredentials, CurrentPrincipal, HoldsStream, Principal } from '@mango/feature-auth';
import type { Request, Response } from 'express';
import { SessionStreamer } from './session-streamer';

/** `GET /v1/sessions/{id}/events/stream` (see SessionStreamer). */
@Controller('v1/sessions/:sessionId/events/stream')
export class SessionStreamController {
  constructor(private readonly streamer: SessionStreamer) {}

  @Get()
  @AllowCredentials('workspace', 'work')
  @HoldsStream()
  stream(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Query() query: Record<string, unknown>,
    @Headers('last-event-id') lastEventHeader: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.streamer.open(p, sessionId, query, lastEventHeader, req, res);
  }
}
