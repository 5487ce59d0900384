import { Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { conflict, invalidRequest, notFound } from '@mango/domain-kernel';
import { CurrentPrincipal, HoldsStream, Principal } from '@mango/feature-auth';
import { primaryThreadId, SessionThreadRepository } from '@mango/persistence';
import { isId } from '@mango/platform-ids';
import { decodeCursor, parseLimit, rejectUnknownQuery, toPage } from '@mango/platform-pagination';
import type { Request, Response } from 'express';
import { DataSource } from 'typeorm';
import { renderThread, rowVisibleOn, threadEventFilter, threadStream } from './session-thread-reads';
import { SessionStreamer } from './session-streamer';
import { SessionsService } from './sessions.service';

type Q = Record<string, unknown>;

/** The primary Thread of a Session: same ULID as the Session, `sthr_` prefix (openapi.yaml `SessionThread`). */
export { primaryThreadId };

/**
 * `/v1/sessions/{id}/threads*` (ADR 0017), served from `session_threads`: every Session has its primary
 * Thread (no parent, created with the Session); delegate Threads are created by the multi-agent
 * orchestration. A Thread's history and stream are the Session's one log seen through `visibleOn`.
 * Archive records a durable intent (`archive_requested_at` + an outbox row) that the orchestration
 * finishes; the primary Thread is archived with its Session (400 here), a running Thread is 409.
 */
@Controller('v1/sessions/:sessionId/threads')
export class SessionThreadsController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly streams: SessionStreamer,
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(SessionThreadRepository) private readonly threads: SessionThreadRepository,
  ) {}

  private async thread(p: Principal, sessionId: string, threadId: string) {
    const session = await this.sessions.get(p, sessionId);
    const thread = isId('sessionThread', threadId)
      ? await this.threads.get(this.dataSource.manager, session.id, threadId)
      : null;
    if (!thread) throw notFound('session_thread', threadId);
    return { session, thread };
  }

  @Get()
  async list(@CurrentPrincipal() p: Principal, @Param('sessionId') sessionId: string, @Query() q: Q) {
    rejectUnknownQuery(q, ['limit', 'page']);
    const session = await this.sessions.get(p, sessionId);
    const limit = parseLimit(q.limit);
    const scope = `threads:${session.id}`;
    let afterId: string | undefined;
    if (typeof q.page === 'string') {
      afterId = decodeCursor(q.page, { scope, order: 'asc' }).after;
      if (!isId('sessionThread', afterId)) throw invalidRequest('page is not a valid page cursor');
    } else if (q.page !== undefined) throw invalidRequest('page must be a string');
    const rows = await this.threads.list(this.dataSource.manager, session.id, { limit: limit + 1, afterId });
    return toPage(
      rows,
      limit,
      (t) => t.id,
      (t) => renderThread(t, session),
      { scope, order: 'asc' },
    );
  }

  @Get(':threadId')
  async get(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Param('threadId') threadId: string,
  ) {
    const { session, thread } = await this.thread(p, sessionId, threadId);
    return renderThread(thread, session);
  }

  /**
   * Archive (hosted §2.4): an idle Thread (`requires_action` counts as idle) gets its durable archive
   * intent; a running or rescheduling one is 409 (interrupt it first), so is a terminated one; the
   * primary is 400 (archive the Session). Asking again answers the Thread and writes nothing.
   */
  @Post(':threadId/archive')
  @HttpCode(200)
  async archive(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Param('threadId') threadId: string,
  ) {
    const { session } = await this.thread(p, sessionId, threadId);
    const result = await this.threads.requestArchive(session.id, threadId, new Date());
    switch (result.decision) {
      case 'not_found':
        throw notFound('session_thread', threadId);
      case 'primary':
        throw invalidRequest('the primary thread cannot be archived; archive the session instead');
      case 'running':
        throw conflict(`thread ${threadId} is ${result.thread.status}; interrupt it before archiving`);
      case 'terminated':
        throw conflict(`thread ${threadId} is terminated; only an idle thread is archived`);
      case 'request':
      case 'already':
        return renderThread(result.thread, session);
    }
  }

  @Get(':threadId/events')
  async events(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Param('threadId') threadId: string,
    @Query() q: Q,
  ) {
    const { thread } = await this.thread(p, sessionId, threadId);
    return this.sessions.listEvents(p, sessionId, q, {
      id: thread.id,
      filter: threadEventFilter(threadStream(thread)),
    });
  }

  @Get(':threadId/stream')
  @HoldsStream()
  async stream(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Param('threadId') threadId: string,
    @Query() q: Q,
    @Headers('last-event-id') lastEventHeader: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const { thread } = await this.thread(p, sessionId, threadId);
    const stream = threadStream(thread);
    return this.streams.open(p, sessionId, q, lastEventHeader, req, res, (row) => rowVisibleOn(stream, row));
  }
}
