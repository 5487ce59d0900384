import { auditOperation, auditOutcome, auditResourceId, isAudited } from './audit-entry';

describe('audit entries', () => {
  it.each([
    ['POST', '/v1/agents', 201, true],
    ['POST', '/v1/agents/:agentId', 409, true],
    ['DELETE', '/v1/files/:fileId', 404, true],
    ['PUT', '/v1/x', 200, true],
    ['PATCH', '/v1/x', 400, true],
    ['GET', '/v1/agents', 200, false],
    ['HEAD', '/v1/agents', 200, false],
    ['POST', undefined, 404, false],
    ['POST', '/v1/sessions', 429, false],
  ])('%s %s answered %d: audited %s', (method, routeTemplate, status, audited) => {
    expect(isAudited({ method, routeTemplate, status })).toBe(audited);
  });

  it('names the operation by method and route, parameters in snake case', () => {
    expect(auditOperation('POST', '/v1/sessions/:sessionId/events')).toBe(
      'POST /v1/sessions/{session_id}/events',
    );
    expect(auditOperation('POST', '/v1/webhooks/:webhookId/deliveries/:deliveryId/redeliver')).toBe(
      'POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver',
    );
  });

  const SESSION = 'sesn_01JABCDEFGHJKMNPQRSTVWXYZ0';
  const CREATED = 'vcrd_01JABCDEFGHJKMNPQRSTVWXYZ0';
  it.each([
    ['a create: the new id', { vaultId: 'vlt_01JABCDEFGHJKMNPQRSTVWXYZ0' }, 201, { id: CREATED }, CREATED],
    ['events sent: the Session in the path', { sessionId: SESSION }, 200, { data: [] }, SESSION],
    ['a refused write: the path id, never a body id', { sessionId: SESSION }, 409, { id: CREATED }, SESSION],
    ['a create refused: nothing', {}, 400, undefined, null],
    ['a body id that is not a Mango id: ignored', {}, 201, { id: 'whatever' }, null],
    ['a path value that is not an id: ignored', { name: 'x' }, 200, null, null],
  ])('resource of %s', (_name, params, status, result, expected) => {
    expect(auditResourceId({ params, status, result })).toBe(expected);
  });

  it.each([
    [200, 'succeeded'],
    [201, 'succeeded'],
    [204, 'succeeded'],
    [400, 'failed'],
    [409, 'failed'],
    [503, 'failed'],
  ])('status %d is %s', (status, outcome) => {
    expect(auditOutcome(status)).toBe(outcome);
  });
});
