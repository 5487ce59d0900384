import { AppProcess, httpClient, HttpClient, startApi, ApiUnderTest } from '@mango/testing';
import { startOrchestrator } from './support';

type Ev = { id: string; type: string; [k: string]: any };

/**
 * No model key and no endpoint configured (the public API is the default): a turn ends at once with a
 * session.error that names the variables to set — no retries, no hang — and the Session stays usable.
 */
describe('an orchestrator without a model key (real API, orchestrator, Temporal)', () => {
  let api: ApiUnderTest;
  let orchestrator: AppProcess;
  let ws: HttpClient;

  beforeAll(async () => {
    api = await startApi('nomodel');
    orchestrator = await startOrchestrator(api.db.url, { taskQueue: `nomodel-${Date.now()}` });
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  }, 120_000);

  afterAll(async () => {
    await orchestrator?.stop();
    await api?.close();
  });

  it('ends the turn at once with session.error naming MANGO_MODEL_API_KEY / ANTHROPIC_API_KEY', async () => {
    expect(orchestrator.logs()).toMatch(/model endpoint unusable/);
    const agent = (await ws.post('/v1/agents', { name: 'chat', model: 'claude-sonnet-4-6' })).body.id;
    const environment_id = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    const created = await ws.post('/v1/sessions', {
      agent,
      environment_id,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Hello' }] }],
    });
    expect([created.status, created.body.error]).toEqual([201, undefined]);
    const s = created.body;
    const started = Date.now();
    let list: Ev[] = [];
    while (Date.now() - started < 30_000) {
      list = (await ws.get(`/v1/sessions/${s.id}/events?limit=100`)).body.data;
      if (list.some((e) => e.type === 'session.status_idle')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(list.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'session.error',
      'session.status_idle',
    ]);
    expect(list[2]!.error.retry_status).toEqual({ type: 'exhausted' });
    expect(list[2]!.error.message).toMatch(/set MANGO_MODEL_API_KEY \(or ANTHROPIC_API_KEY\)/);
    expect(list[3]!.stop_reason).toEqual({ type: 'retries_exhausted' });
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.status).toBe('idle');
  }, 60_000);
});
