import { EGRESS_FAILURES, EGRESS_RULES } from '@mango/domain-egress';
import {
  invalidRequest,
  readArray,
  readBoolean,
  readEnum,
  readInteger,
  readObject,
  readString,
} from '@mango/domain-kernel';
import type { SandboxEgressRecordInput } from '@mango/persistence';

/** The most records one report may carry (the supervisor sends them in batches). */
export const MAX_RECORDS_PER_REPORT = 100;

const FIELDS = ['kind', 'host', 'port', 'allowed', 'rule', 'failure', 'bytes_out', 'bytes_in'];

/**
 * A supervisor's report of the connections its egress proxy judged for one Session Work item (ADR 0021):
 * `{records: [...]}`, each record checked field by field (a refused one names its rule; an allowed one
 * names none, and at most how it failed).
 */
export function parseEgressReport(body: unknown): SandboxEgressRecordInput[] {
  const o = readObject(body, 'body', ['records']);
  const raw = readArray(o.records, 'records', { max: MAX_RECORDS_PER_REPORT });
  return raw.map((v, i) => {
    const at = `records[${i}]`;
    const r = readObject(v, at, FIELDS);
    const allowed = readBoolean(r.allowed, `${at}.allowed`);
    const rule =
      r.rule === undefined || r.rule === null ? null : readEnum(r.rule, `${at}.rule`, EGRESS_RULES);
    const failure =
      r.failure === undefined || r.failure === null
        ? null
        : readEnum(r.failure, `${at}.failure`, EGRESS_FAILURES);
    if (!allowed && !rule) throw invalidRequest(`${at}.rule is required for a refused connection`);
    if (allowed && rule) throw invalidRequest(`${at}.rule is only for a refused connection`);
    return {
      kind: readEnum(r.kind, `${at}.kind`, ['connect', 'http'] as const),
      host: readString(r.host, `${at}.host`, { min: 1, max: 255 }),
      port: readInteger(r.port, `${at}.port`, { min: 0, max: 65535 }),
      allowed,
      rule,
      failure,
      bytesOut: readInteger(r.bytes_out, `${at}.bytes_out`, { min: 0, max: Number.MAX_SAFE_INTEGER }),
      bytesIn: readInteger(r.bytes_in, `${at}.bytes_in`, { min: 0, max: Number.MAX_SAFE_INTEGER }),
    };
  });
}
