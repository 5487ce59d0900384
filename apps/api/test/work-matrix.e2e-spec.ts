import { decodeWorkSecret } from '@mango/feature-work';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Credential × operation matrix for the eleven Work operations. Every cell runs on a fresh item in the
 * state the credential needs, and asserts the exact status and error type.
 */
type Op =
  | 'create'
  | 'retrieve'
  | 'update'
  | 'list'
  | 'poll'
  | 'ack'
  | 'heartbeat'
  | 'result'
  | 'fail'
  | 'stats'
  | 'stop';
const OPS: Op[] = [
  'create',
  'retrieve',
  'update',
  'list',
  'poll',
  'ack',
  'heartbeat',
  'result',
  'fail',
  'stats',
  'stop',
];
type Cell = number | [number, string];
const E401: Cell = [401, 'authentication_error'];
const E403: Cell = [403, 'permission_error'];
const E404: Cell = [404, 'not_found_error'];

const row = (cells: Partial<Record<Op, Cell>>, fallback: Cell): Record<Op, Cell> =>
  Object.fromEntries(OPS.map((op) => [op, cells[op] ?? fallback])) as Record<Op, Cell>;

const MATRIX: Record<string, Record<Op, Cell>> = {
  workspaceKey: row({ create: 201, retrieve: 200, update: 200, list: 200, stats: 200, stop: 204 }, E403),
  environmentKeyOwn: row({ poll: 200, ack: 200, stats: 200 }, E403),
  environmentKeyOther: row({}, E403),
  revokedKey: row({}, E401),
  otherWorkspaceKey: row(
    { create: E404, retrieve: E404, update: E404, list: E404, stats: E404, stop: E404 },
    E403,
  ),
  workTokenBeforeAck: row({}, E401),
  workTokenAfterAck: row(
    {
      heartbeat: 200,
      result: [409, 'invalid_request_error'],
      fail: [400, 'invalid_request_error'],
      stop: 204,
    },
    E403,
  ),
  workTokenAfterStop: row({}, E401),
  workTokenAfterExpiry: row({ heartbeat: [412, 'heartbeat_precondition_failed'] }, E401),
  workTokenAfterReclaim: row({}, E401),
};

describe('Work credential × operation matrix (real apps/api process)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let envId: string;
  let sup: HttpClient;
  let otherEnvKey: string;
  let revokedKey: string;
  let otherWorkspaceKey: string;
  let wsKey: string;
  let supKey: string;

  beforeAll(async () => {
    api = await startApi('matrix');
    wsKey = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(api.url, wsKey);
    envId = (await ws.post('/v1/environments', { name: 'a' })).body.id;
    supKey = (await api.issueKey('wrkspc_default', envId)).api_key;
    sup = httpClient(api.url, supKey);
    const otherEnv = (await ws.post('/v1/environments', { name: 'b' })).body.id;
    otherEnvKey = (await api.issueKey('wrkspc_default', otherEnv)).api_key;
    const r = await api.issueKey('wrkspc_default', envId);
    await api.revokeKey(r.id);
    revokedKey = r.api_key;
    otherWorkspaceKey = (await api.issueKey(await api.createWorkspace())).api_key;
  });
  afterAll(() => api.close());

  const base = () => `/v1/environments/${envId}/work`;

  /** A fresh healthcheck, claimed (and acked) so that every operation has something to act on. */
  async function claimedItem(ackIt: boolean): Promise<{ id: string; token: string }> {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    // Anything older that is still live could be claimed first: stop it so this Poll claims exactly our item.
    const older = await api.sql<{ id: string }>(
      "SELECT id FROM work_items WHERE environment_id = $1 AND state <> 'stopped' AND id <> $2",
      [envId, created.body.id],
    );
    for (const o of older) await ws.post(`${base()}/${o.id}/stop`, { force: true });
    const polled = await sup.get(`${base()}/poll`);
    expect(polled.body.id).toBe(created.body.id);
    if (ackIt) await sup.post(`${base()}/${created.body.id}/ack`);
    return { id: created.body.id, token: decodeWorkSecret(polled.body.secret).sessions_token };
  }

  async function credentialFor(name: string): Promise<{ credential: string; id: string }> {
    switch (name) {
      case 'workspaceKey':
      case 'environmentKeyOwn': {
        const item = await claimedItem(true);
        return { credential: name === 'workspaceKey' ? wsKey : supKey, id: item.id };
      }
      case 'workTokenBeforeAck': {
        const item = await claimedItem(false);
        return { credential: item.token, id: item.id };
      }
      case 'workTokenAfterAck': {
        const item = await claimedItem(true);
        return { credential: item.token, id: item.id };
      }
      case 'workTokenAfterStop': {
        const item = await claimedItem(true);
        await ws.post(`${base()}/${item.id}/stop`, { force: true });
        return { credential: item.token, id: item.id };
      }
      case 'workTokenAfterExpiry': {
        const item = await claimedItem(true);
        await api.sql(
          "UPDATE work_items SET lease_expires_at = now() - interval '1 millisecond' WHERE id = $1",
          [item.id],
        );
        return { credential: item.token, id: item.id };
      }
      case 'workTokenAfterReclaim': {
        const item = await claimedItem(false);
        // Older unacked claims of earlier cells would be reclaimed first: stop them.
        const others = await api.sql<{ id: string }>(
          "SELECT id FROM work_items WHERE environment_id = $1 AND state <> 'stopped' AND id <> $2",
          [envId, item.id],
        );
        for (const o of others) await ws.post(`${base()}/${o.id}/stop`, { force: true });
        const re = await sup.get(`${base()}/poll?reclaim_older_than_ms=0`);
        expect(re.body.id).toBe(item.id);
        await sup.post(`${base()}/${item.id}/ack`);
        return { credential: item.token, id: item.id };
      }
      default: {
        const item = await claimedItem(true);
        const credential = { environmentKeyOther: otherEnvKey, revokedKey, otherWorkspaceKey }[name]!;
        return { credential, id: item.id };
      }
    }
  }

  const request = (op: Op, id: string): [string, string, unknown?] => {
    switch (op) {
      case 'create':
        return ['POST', base(), { data: { type: 'healthcheck' } }];
      case 'retrieve':
        return ['GET', `${base()}/${id}`];
      case 'update':
        return ['POST', `${base()}/${id}`, { metadata: { k: 'v' } }];
      case 'list':
        return ['GET', base()];
      case 'poll':
        return ['GET', `${base()}/poll`];
      case 'ack':
        return ['POST', `${base()}/${id}/ack`];
      case 'heartbeat':
        return ['POST', `${base()}/${id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`];
      case 'result':
        return ['POST', `${base()}/${id}/result`, { status: 'succeeded', message: 'ok' }];
      case 'fail':
        return ['POST', `${base()}/${id}/fail`, { message: 'bad input' }];
      case 'stats':
        return ['GET', `${base()}/stats`];
      case 'stop':
        return ['POST', `${base()}/${id}/stop`, {}];
    }
  };

  const cases = Object.entries(MATRIX).flatMap(([cred, cells]) =>
    OPS.map((op) => [cred, op, cells[op]] as const),
  );

  it.each(cases)('%s × %s', async (cred, op, expected) => {
    const { credential, id } = await credentialFor(cred);
    const [method, path, body] = request(op, id);
    const res = await httpClient(api.url, credential).request(method, path, body);
    const [status, type] = Array.isArray(expected) ? expected : [expected, undefined];
    expect({ status: res.status, type: res.body?.error?.type }).toEqual({ status, type });
  });
});
