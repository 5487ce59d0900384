import { createDataSource } from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import { ApiUnderTest, httpClient, startApi } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { createDeploymentActivities } from './deployment.activities';

/**
 * A scheduled Deployment run (the orchestrator's activity) honours the running-Sessions limit as the API's
 * manual run does (docs/api-guide.md "Fair use"): in a Workspace at its limit it records a run with
 * `session_rate_limited_error` and creates no Session. Real API (for the fixtures) and PostgreSQL.
 */
describe('scheduled Deployment runs and the running-Sessions limit', () => {
  let api: ApiUnderTest;
  let ds: DataSource;

  beforeAll(async () => {
    api = await startApi('deplfair', { MANGO_MAX_RUNNING_SESSIONS_PER_WORKSPACE: '1' });
    ds = await createDataSource({ url: api.db.url, poolSize: 2 }).initialize();
  }, 120_000);

  afterAll(async () => {
    await ds?.destroy();
    await api?.close();
  });

  it('a Workspace at its limit gets a failed run (session_rate_limited_error, no Session); without a limit the run creates one', async () => {
    const http = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    const agent = (await http.post('/v1/agents', { name: 'nightly', model: 'claude-sonnet-4-6' })).body.id;
    const env = (await http.post('/v1/environments', { name: 'nightly' })).body.id;
    const msg = { type: 'user.message', content: [{ type: 'text', text: 'report' }] };
    // One turn under way fills the Workspace's limit of 1.
    const running = await http.post('/v1/sessions', { agent, environment_id: env, initial_events: [msg] });
    expect(running.body.status).toBe('running');
    const deployment = (
      await http.post('/v1/deployments', {
        name: 'nightly',
        agent,
        environment_id: env,
        initial_events: [msg],
      })
    ).body.id;
    // A cron schedule as Temporal would fire it (no Temporal here: the activity is called as the workflow would).
    await api.sql(
      `UPDATE deployments SET schedule = '{"type":"cron","expression":"0 9 * * *","timezone":"UTC","jitter_ms":0}' WHERE id = $1`,
      [deployment],
    );
    const sessions = async () =>
      Number(
        (await api.sql(`SELECT count(*) AS n FROM sessions WHERE deployment_id = $1`, [deployment]))[0].n,
      );
    const activities = (limit: number | null) =>
      createDeploymentActivities({
        dataSource: ds,
        prices: {},
        scheduler: null,
        metrics: new MangoMetrics('orchestrator'),
        runningSessionsPerWorkspace: limit,
      });

    const refused = await activities(1).runScheduledDeployment({
      deploymentId: deployment,
      scheduledAt: '2026-12-07T09:00:00.000Z',
    });
    const [run] = await api.sql('SELECT session_id, error FROM deployment_runs WHERE id = $1', [refused]);
    expect(run).toMatchObject({ session_id: null, error: { type: 'session_rate_limited_error' } });
    expect(await sessions()).toBe(0);
    // The Deployment is not paused by it.
    expect((await http.get(`/v1/deployments/${deployment}`)).body.status).toBe('active');

    const admitted = await activities(null).runScheduledDeployment({
      deploymentId: deployment,
      scheduledAt: '2026-12-08T09:00:00.000Z',
    });
    const [second] = await api.sql('SELECT session_id, error FROM deployment_runs WHERE id = $1', [admitted]);
    expect(second.error).toBeNull();
    expect(await sessions()).toBe(1);
  });
});
