import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { invalidRequest, notFound, unauthenticated } from '@mango/domain-kernel';
import { AllowCredentials, CurrentPrincipal, Principal } from '@mango/feature-auth';
import { isId } from '@mango/platform-ids';
import { rejectUnknownQuery } from '@mango/platform-pagination';
import { SessionEntity, SessionEventEntity } from '@mango/persistence';
import type { Request, Response } from 'express';
import { DataSource, IsNull } from 'typeorm';
import { renderEvent } from './session.view';
import { SessionStreamHub } from './session-stream.service';
import { SessionsService } from './sessions.service';

const frames = new WeakMap<SessionEventEntity, string>();
/** One SSE frame per event (`id:` is the sequence), rendered once however many streams carry it. */
function frameOf(row: SessionEventEntity): string {
  let frame = frames.get(row);
  if (!frame) {
    frame = `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(renderEvent(row))}\n\n`;
    frames.set(row, frame);
  }
  return frame;
}

/** Keep-alive frames at most every 15 s (decisions). */
export const KEEPALIVE_MS = 15_000;
/** A Work token's stream re-checks that it still owns the Session this often (decisions). */
export const OWNERSHIP_CHECK_MS = 1_000;

/**
 * `GET /v1/sessions/{id}/events/stream` — Server-Sent Events over the durable log. Every frame carries
 * `id: <sequence>`; `Last-Event-ID` (header or `?last_event_id=`) resumes after that sequence with no gap
 * and no duplicate, for the whole life of the Session. The stream ends after `session.deleted`.
 */
@Controller('v1/sessions/:sessionId/events/stream')
export class SessionStreamController {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly hub: SessionStreamHub,
    private readonly sessions: SessionsService,
  ) {}

  @Get()
  @AllowCredentials('workspace', 'work')
  async stream(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Query() query: Record<string, unknown>,
    @Headers('last-event-id') lastEventHeader: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    rejectUnknownQuery(query, ['last_event_id', 'event_deltas', 'event_deltas[]']);
    const raw = lastEventHeader ?? (query.last_event_id as string | undefined);
    if (raw !== undefined && !/^\d{1,18}$/.test(String(raw)))
      throw invalidRequest('Last-Event-ID must be an event sequence number from this stream');
    if (!isId('session', sessionId)) throw notFound('session', sessionId);
    if (p.kind === 'work' && !p.live) throw unauthenticated('the Work token is no longer valid');
    if (p.kind === 'work' && p.sessionId !== sessionId) throw notFound('session', sessionId);
    const session = await this.dataSource.manager.findOne(SessionEntity, {
      where: { id: sessionId, workspaceId: p.workspaceId, deletedAt: IsNull() },
    });
    if (!session) throw notFound('session', sessionId);

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();

    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      clearInterval(keepalive);
      clearInterval(ownership);
      unsubscribe();
      res.end();
    };
    // Rendered once per event and shared by every stream of the Session.
    const unsubscribe = this.hub.subscribe(sessionId, {
      last: BigInt(raw ?? '0'),
      deliver: (row) => {
        if (closed) return;
        res.write(frameOf(row));
        if (row.type === 'session.deleted') finish();
      },
      end: () => finish(),
    });
    const keepalive = setInterval(() => res.write(`event: ping\ndata: {}\n\n`), KEEPALIVE_MS);
    // A Work token's stream lives only as long as its lease: after Stop, expiry or a reclaim it ends
    // with an error frame, so a stale worker stops seeing its successor's events.
    const ownership =
      p.kind === 'work'
        ? setInterval(() => {
            this.sessions.workTokenStillOwns(p, sessionId).then(
              (owns) => {
                if (owns || closed) return;
                res.write(
                  `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'the Work token no longer owns this session' } })}\n\n`,
                );
                finish();
              },
              () => undefined, // a failed check is retried next second
            );
          }, OWNERSHIP_CHECK_MS)
        : undefined;
    req.on('close', finish);
  }
}
