import { Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { invalidRequest, notFound } from '@mango/domain-kernel';
import { CurrentPrincipal, Principal } from '@mango/feature-auth';
import { ID_PREFIXES, isId } from '@mango/platform-ids';
import { rejectUnknownQuery } from '@mango/platform-pagination';
import type { Request, Response } from 'express';
import { SessionStreamer } from './session-streamer';
import { SessionView } from './session.view';
import { SessionsService } from './sessions.service';

type Q = Record<string, unknown>;

/** The primary Thread of a Session: same ULID as the Session, `sthr_` prefix (openapi.yaml `SessionThread`). */
export const primaryThreadId = (sessionId: string) =>
  ID_PREFIXES.sessionThread + sessionId.slice(ID_PREFIXES.session.length);

function renderThread(s: SessionView) {
  const { multiagent: _multiagent, ...agent } = s.agent as Record<string, unknown>;
  return {
    id: primaryThreadId(s.id),
    type: 'session_thread' as const,
    session_id: s.id,
    parent_thread_id: null,
    agent,
    status: s.status,
    stats: null,
    usage: s.usage,
    created_at: s.created_at,
    updated_at: s.updated_at,
    archived_at: s.archived_at,
  };
}

/**
 * `/v1/sessions/{id}/threads*`. Every Session has its primary Thread (no parent); it carries all of the
 * Session's events, so its history and stream are the Session's. Delegate threads arrive with
 * multi-agent rosters; until then a Session lists exactly one Thread.
 */
@Controller('v1/sessions/:sessionId/threads')
export class SessionThreadsController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly streams: SessionStreamer,
  ) {}

  private async thread(p: Principal, sessionId: string, threadId: string) {
    const session = await this.sessions.get(p, sessionId);
    if (!isId('sessionThread', threadId) || threadId !== primaryThreadId(session.id))
      throw notFound('session_thread', threadId);
    return session;
  }

  @Get()
  async list(@CurrentPrincipal() p: Principal, @Param('sessionId') sessionId: string, @Query() q: Q) {
    rejectUnknownQuery(q, ['limit', 'page']);
    if (q.page !== undefined) throw invalidRequest('page is not a page cursor of this list');
    return { data: [renderThread(await this.sessions.get(p, sessionId))], next_page: null };
  }

  @Get(':threadId')
  async get(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Param('threadId') threadId: string,
  ) {
    return renderThread(await this.thread(p, sessionId, threadId));
  }

  @Post(':threadId/archive')
  @HttpCode(200)
  async archive(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Param('threadId') threadId: string,
  ) {
    await this.thread(p, sessionId, threadId);
    throw invalidRequest('the primary thread cannot be archived; archive the session instead');
  }

  @Get(':threadId/events')
  async events(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Param('threadId') threadId: string,
    @Query() q: Q,
  ) {
    await this.thread(p, sessionId, threadId);
    return this.sessions.listEvents(p, sessionId, q);
  }

  @Get(':threadId/stream')
  async stream(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Param('threadId') threadId: string,
    @Query() q: Q,
    @Headers('last-event-id') lastEventHeader: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.thread(p, sessionId, threadId);
    return this.streams.open(p, sessionId, q, lastEventHeader, req, res);
  }
}
