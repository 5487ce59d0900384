import { ModelClient } from '@mango/adapter-model';
import { createSessionActivities } from '@mango/activities';
import { createDataSource } from '@mango/persistence';
import {
  ApiUnderTest,
  httpClient,
  HttpClient,
  startApi,
  startScriptedModel,
  ScriptedModelServer,
} from '@mango/testing';
import { CancelledFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { DataSource } from 'typeorm';

type Ev = { type: string; [k: string]: any };

/**
 * Two attempts of one model step in one orchestrator process (ADR 0019 "One request per step in a
 * process"): what happens when an activity outlives its lost workflow run and starts the next step itself
 * while the new run schedules the same step. The real activities on a real database (the API's), a real
 * model client against the scripted Messages API, two activity contexts at once; no workflow.
 */
describe('one model request per step in a process (real PostgreSQL, model client, activities)', () => {
  let api: ApiUnderTest;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let ds: DataSource;
  let activities: ReturnType<typeof createSessionActivities>;

  beforeAll(async () => {
    api = await startApi('flights');
    model = await startScriptedModel();
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    ds = await createDataSource({ url: api.db.url, poolSize: 4 }).initialize();
    activities = createSessionActivities({
      dataSource: ds,
      model: new ModelClient({ baseUrl: model.url, apiKey: 'test-key' }),
    });
  }, 120_000);

  afterAll(async () => {
    await ds?.destroy();
    await model?.close();
    await api?.close();
  });

  /** A Session with a message and its turn begun (no orchestrator runs: the test is the worker). */
  async function turnBegun(label: string): Promise<string> {
    const agent = (await ws.post('/v1/agents', { name: label, model: 'm' })).body.id;
    const environment_id = (await ws.post('/v1/environments', { name: label })).body.id;
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }],
      })
    ).body;
    expect(s.id).toMatch(/^sesn_/);
    await new MockActivityEnvironment().run(activities.beginTurn, { sessionId: s.id, turn: 1 });
    return s.id;
  }
  const events = async (sessionId: string): Promise<Ev[]> =>
    (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data;
  const step = (sessionId: string, env = new MockActivityEnvironment()) =>
    env.run(activities.runModelStep, { sessionId, turn: 1, step: 0 });
  /** Runs `fn` once the model has received more than `n` requests: the first attempt is then in flight. */
  const whenAsked = async <T>(n: number, fn: () => Promise<T>): Promise<T> => {
    while (model.requests.length <= n) await new Promise((r) => setTimeout(r, 10));
    return fn();
  };

  it('a second attempt of a step in flight waits for its reply and asks nothing', async () => {
    const sessionId = await turnBegun('flight-wait');
    // One reply scripted: a second request would find none (500), failing the attempt that made it.
    model.script({ content: [{ type: 'text', text: 'the one reply' }], delayMs: 1000 });
    const before = model.requests.length;
    const [first, second] = await Promise.all([step(sessionId), whenAsked(before, () => step(sessionId))]);
    expect(model.requests.length - before).toBe(1);
    expect(first).toMatchObject({ stopReason: 'end_turn' });
    expect(second).toMatchObject({ stopReason: 'end_turn' });
    const log = await events(sessionId);
    expect(log.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
    ]);
    expect(log.find((e) => e.type === 'agent.message')!.content[0].text).toBe('the one reply');
  });

  it('when the attempt in flight fails, the waiting one asks the model itself', async () => {
    const sessionId = await turnBegun('flight-fails');
    model.script(
      { status: 500, error: 'overloaded', delayMs: 800 },
      { content: [{ type: 'text', text: 'answered by the second attempt' }] },
    );
    const before = model.requests.length;
    const [first, second] = await Promise.allSettled([
      step(sessionId),
      whenAsked(before, () => step(sessionId)),
    ]);
    expect(first.status).toBe('rejected');
    expect(second).toMatchObject({ status: 'fulfilled', value: { stopReason: 'end_turn' } });
    expect(model.requests.length - before).toBe(2);
    const log = await events(sessionId);
    expect(log.filter((e) => e.type === 'agent.message').map((e) => e.content[0].text)).toEqual([
      'answered by the second attempt',
    ]);
  });

  it('a waiting attempt that is cancelled stops waiting and records nothing', async () => {
    const sessionId = await turnBegun('flight-cancel');
    model.script({ content: [{ type: 'text', text: 'slow' }], delayMs: 1500 });
    const waiting = new MockActivityEnvironment();
    const before = model.requests.length;
    const first = step(sessionId);
    const second = whenAsked(before, () => {
      setTimeout(() => waiting.cancel(), 300);
      return step(sessionId, waiting);
    });
    await expect(second).rejects.toBeInstanceOf(CancelledFailure);
    await expect(first).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect((await events(sessionId)).filter((e) => e.type === 'agent.message')).toHaveLength(1);
  });
});
