import {
  AuthenticationError,
  ConflictError,
  decodeWorkSecret,
  MangoClient,
  NotFoundError,
  PermissionDeniedError,
  PreconditionFailedError,
} from '@mango/sdk';
import { ApiUnderTest, startApi } from './support';

/** The TypeScript SDK against the real HTTP handlers (conformance: shapes, paging, errors, the Work flow). */
describe('@mango/sdk conformance (real apps/api process)', () => {
  let api: ApiUnderTest;
  let client: MangoClient;
  beforeAll(async () => {
    api = await startApi('sdk');
    client = new MangoClient({
      baseUrl: api.url,
      apiKey: (await api.issueKey('wrkspc_default')).api_key,
      maxRetries: 0,
    });
  });
  afterAll(() => api.close());

  it('Agents: create, optimistic update, versions, auto-paging and typed errors', async () => {
    const agent = await client.agents.create({ name: 'sdk-agent', model: 'claude-sonnet-4-6' });
    expect(agent.version).toBe(1);
    const v2 = await client.agents.update(agent.id, { version: 1, description: 'two' });
    expect(v2.version).toBe(2);
    await expect(client.agents.update(agent.id, { version: 1, description: 'stale' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect((await client.agents.retrieve(agent.id, { version: 1 })).description).toBeNull();
    for (let i = 0; i < 4; i++) await client.agents.create({ name: `page-${i}`, model: 'm' });
    const seen: string[] = [];
    for await (const a of client.agents.list({ limit: 2 })) seen.push(a.id);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    await expect(client.agents.retrieve('agent_01JD2Y3QX9V5M8K7R6T4W2P0ZZ')).rejects.toBeInstanceOf(
      NotFoundError,
    );
    const anonymous = new MangoClient({ baseUrl: api.url, apiKey: 'mango_ak_nope', maxRetries: 0 });
    const err = await anonymous.agents.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).requestId).toMatch(/^req_/);
  });

  it('Environments and the healthcheck Work flow, with the Work token through withToken', async () => {
    const env = await client.environments.create({ name: 'sdk-env', metadata: { team: 'a' } });
    const supervisor = new MangoClient({
      baseUrl: api.url,
      apiKey: (await api.issueKey('wrkspc_default', env.id)).api_key,
      maxRetries: 0,
    });
    await expect(supervisor.environments.list()).rejects.toBeInstanceOf(PermissionDeniedError);

    const check = await client.environments.work.create(env.id);
    expect(check).toMatchObject({ state: 'queued', data: { type: 'healthcheck' } });
    expect(await supervisor.environments.work.stats(env.id)).toMatchObject({ depth: 1 });
    const polled = await supervisor.environments.work.poll(env.id, { worker_id: 'sdk' });
    expect(polled?.id).toBe(check.id);
    const secret = decodeWorkSecret(polled!.secret);
    await supervisor.environments.work.ack(env.id, check.id);
    const worker = client.withToken(secret.sessions_token, { baseUrl: secret.api_base_url });
    const hb = await worker.environments.work.heartbeat(env.id, check.id, {
      expected_last_heartbeat: 'NO_HEARTBEAT',
    });
    expect(hb.state).toBe('active');
    const stale = await worker.environments.work
      .heartbeat(env.id, check.id, { expected_last_heartbeat: '2020-01-01T00:00:00.000Z' })
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(PreconditionFailedError);
    expect((stale as PreconditionFailedError).currentState).toMatchObject({ state: 'active' });
    const done = await worker.environments.work.result(env.id, check.id, {
      status: 'succeeded',
      message: 'ok',
    });
    expect(done.result).toEqual({ status: 'succeeded', message: 'ok' });
    expect(await supervisor.environments.work.poll(env.id)).toBeNull();
    const items = [];
    for await (const w of client.environments.work.list(env.id, { limit: 1 })) items.push(w);
    expect(items.map((w) => w.id)).toEqual([check.id]);
    const again = await client.environments.work.create(env.id);
    await expect(client.environments.work.stop(env.id, again.id, { force: true })).resolves.toBeUndefined();
    expect((await client.environments.work.retrieve(env.id, again.id)).result?.status).toBe('cancelled');
    expect(await client.environments.delete(env.id)).toEqual({ id: env.id, type: 'environment_deleted' });
  });
});

describe('@mango/sdk Sessions conformance (real apps/api process)', () => {
  it('creates a Session, sends events, pages them and streams them with resume', async () => {
    const api = await startApi('sdksessions');
    try {
      const client = new MangoClient({
        baseUrl: api.url,
        apiKey: (await api.issueKey('wrkspc_default')).api_key,
        maxRetries: 0,
      });
      const agent = await client.agents.create({ name: 'a', model: 'm' });
      const env = await client.environments.create({ name: 'e' });
      const session = await client.sessions.create({ agent: agent.id, environment_id: env.id, title: 'sdk' });
      expect(session).toMatchObject({ status: 'idle', title: 'sdk', agent: { id: agent.id, version: 1 } });
      const sent = await client.sessions.events.send(session.id, {
        events: [
          { type: 'user.message', content: [{ type: 'text', text: 'one' }] },
          { type: 'user.message', content: [{ type: 'text', text: 'two' }] },
          { type: 'user.interrupt' },
        ],
      });
      expect(sent.data.map((e) => e.type)).toEqual(['user.message', 'user.message', 'user.interrupt']);
      const listed = [];
      for await (const e of client.sessions.events.list(session.id, { limit: 1 })) listed.push(e.id);
      expect(listed).toEqual(sent.data.map((e) => e.id));
      const streamed: string[] = [];
      for await (const { id } of client.sessions.events.stream(session.id, { lastEventId: '1' })) {
        streamed.push(id);
        if (streamed.length === 2) break;
      }
      expect(streamed).toEqual(['2', '3']);
      expect((await client.sessions.retrieve(session.id)).status).toBe('running');
      expect(await client.sessions.delete(session.id)).toEqual({ id: session.id, type: 'session_deleted' });
    } finally {
      await api.close();
    }
  });
});
