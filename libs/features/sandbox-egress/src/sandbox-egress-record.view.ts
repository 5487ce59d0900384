import type { SandboxEgressRecordEntity } from '@mango/persistence';

/** The wire form of one Sandbox egress record (openapi.yaml `SandboxEgressRecord`). */
export function renderEgressRecord(r: SandboxEgressRecordEntity) {
  return {
    type: 'sandbox_egress_record' as const,
    id: r.id,
    work_id: r.workId,
    kind: r.kind,
    host: r.host,
    port: r.port,
    allowed: r.allowed,
    rule: r.rule,
    failure: r.failure,
    bytes_out: Number(r.bytesOut),
    bytes_in: Number(r.bytesIn),
    created_at: r.createdAt.toISOString(),
  };
}

export type EgressRecordView = ReturnType<typeof renderEgressRecord>;
