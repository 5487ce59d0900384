import { CallHandler, ExecutionContext, Inject, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import type { Principal } from '@mango/feature-auth';
import { AuditLog } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import type { Request, Response } from 'express';
import { Observable, tap } from 'rxjs';
import { DataSource } from 'typeorm';
import { AuditActor, auditOperation, auditOutcome, auditResourceId, isAudited } from './audit-entry';

/**
 * Records every write through the app in the audit log (docs/api-guide.md, "Audit log"): who (the key or
 * Work token), what (operation and resource id), when, the request id and the outcome. It runs after the
 * auth guard (requests it refuses changed nothing and are not recorded) and writes once the response has
 * finished, with its final status, outside the request's own transaction, so a refused write is recorded
 * too. Nothing of the request or response body is kept but the created resource's id.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  private readonly log = new Logger('audit');

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const principal = req.principal;
    if (!principal || req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS')
      return next.handle();
    const res = http.getResponse<Response>();
    const createdAt = new Date();
    let result: unknown;
    res.once('finish', () => this.record(req, res.statusCode, principal, result, createdAt));
    return next.handle().pipe(tap((value) => (result = value)));
  }

  private record(req: Request, status: number, principal: Principal, result: unknown, createdAt: Date): void {
    const route = (req.route as { path?: unknown } | undefined)?.path;
    const routeTemplate = typeof route === 'string' ? `${req.baseUrl ?? ''}${route}` : undefined;
    if (!isAudited({ method: req.method, routeTemplate, status })) return;
    const actor = actorOf(principal);
    AuditLog.append(this.dataSource, {
      id: newId('auditEntry'),
      workspaceId: principal.workspaceId,
      createdAt,
      actorKind: actor.kind,
      actorId: actor.id,
      operation: auditOperation(req.method, routeTemplate!),
      resourceId: auditResourceId({ params: (req.params ?? {}) as Record<string, string>, status, result }),
      requestId: req.requestId ?? 'unknown',
      statusCode: status,
      outcome: auditOutcome(status),
    }).catch((err: unknown) =>
      // The write itself has happened; the lost audit row is logged with what it would have said.
      this.log.error(
        `audit row not written (${String(err)}): ${req.method} ${routeTemplate} ${status} request ${req.requestId}`,
      ),
    );
  }
}

function actorOf(p: Principal): AuditActor {
  switch (p.kind) {
    case 'workspace':
      return { kind: 'workspace_key', id: p.keyId };
    case 'environment':
      return { kind: 'environment_key', id: p.keyId };
    case 'work':
      return { kind: 'work_token', id: p.workId };
  }
}
