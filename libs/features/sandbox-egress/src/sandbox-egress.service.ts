import { Inject, Injectable } from '@nestjs/common';
import { invalidRequest, notFound, permissionDenied } from '@mango/domain-kernel';
import type { Principal } from '@mango/feature-auth';
import { isId } from '@mango/platform-ids';
import { decodeCursor, Page, parseLimit, rejectUnknownQuery, toPage } from '@mango/platform-pagination';
import { SandboxEgressRecords } from '@mango/persistence';
import { parseEgressReport } from './sandbox-egress-record-input';
import { EgressRecordView, renderEgressRecord } from './sandbox-egress-record.view';

/**
 * Sandbox egress records (ADR 0021): the supervisor reports, with its Environment key, what its egress
 * proxy allowed or refused for a Session Work item; Workspace keys read them per Session.
 */
@Injectable()
export class SandboxEgressService {
  constructor(@Inject(SandboxEgressRecords) private readonly records: SandboxEgressRecords) {}

  async report(p: Principal, environmentId: string, workId: string, body: unknown) {
    if (p.kind !== 'environment') throw permissionDenied('only the Environment key reports egress records');
    if (!isId('environment', environmentId)) throw notFound('environment', environmentId);
    if (p.environmentId !== environmentId)
      throw permissionDenied('this Environment key belongs to another Environment');
    const records = parseEgressReport(body);
    if (!isId('work', workId)) throw notFound('work', workId);
    const written = await this.records.append(environmentId, workId, records);
    if (written === null) throw notFound('work', workId);
    return { type: 'sandbox_egress_report' as const, recorded: written };
  }

  async list(
    workspaceId: string,
    sessionId: string,
    query: Record<string, unknown>,
  ): Promise<Page<EgressRecordView>> {
    rejectUnknownQuery(query, ['limit', 'page']);
    const limit = parseLimit(query.limit);
    if (!isId('session', sessionId)) throw notFound('session', sessionId);
    if (!(await this.records.sessionVisible(workspaceId, sessionId))) throw notFound('session', sessionId);
    let after: string | undefined;
    if (typeof query.page === 'string') {
      after = decodeCursor(query.page, { scope: 'sandbox_egress_records', order: 'asc' }).after;
      if (!/^\d{1,19}$/.test(after)) throw invalidRequest('page is not a valid page cursor');
    }
    const rows = await this.records.listForSession(sessionId, after, limit);
    return toPage(rows, limit, (r) => r.id, renderEgressRecord, {
      scope: 'sandbox_egress_records',
      order: 'asc',
    });
  }
}
