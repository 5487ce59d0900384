import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { Browser, Page } from 'puppeteer-core';
import {
  ApiUnderTest,
  AppProcess,
  dropBucket,
  freshBucketEnv,
  httpClient,
  HttpClient,
  ScriptedModelServer,
  startApi,
  startFilesApp,
  startIngress,
  startOrchestrator,
  startScriptedModel,
  WebhookReceiver,
} from '@mango/testing';

const ROOT = join(__dirname, '../../..');
/** Screenshots of every step (gitignored; CI keeps tmp/). */
const ARTIFACTS = process.env.MANGO_CONSOLE_ARTIFACTS ?? join(ROOT, 'tmp/artifacts/console');
const CHROMIUM = process.env.MANGO_CHROMIUM_BIN ?? '/usr/bin/chromium';
const BUILT = join(ROOT, 'dist/apps/console/index.html');
const PRICES = JSON.stringify({ m: { input: 3, output: 15 } });
const VAULT_KEYRING = `kA:${randomBytes(32).toString('base64')}`;
const WEBHOOK_KEY = randomBytes(32).toString('hex');
/** Secret values given to the API; none may ever appear in a page's HTML. */
const SECRETS = {
  bearer: 'console-bearer-token-8c1f42ad',
  access: 'console-oauth-access-51be90',
  refresh: 'console-oauth-refresh-0d7e33',
  client: 'console-client-secret-a4c2f1',
};

/**
 * The web console in a real headless browser (Debian's Chromium driven by puppeteer-core) against real
 * apps/api (serving the built console at /console), apps/orchestrator, Temporal, PostgreSQL and the
 * scripted model: sign in with a Workspace key, the Sessions list, a Session's transcript updating live,
 * a message sent from the page, an approval answered there, an interrupt, a deep link to an event, and the
 * Environments and Agents pages; the Files, Vaults, Webhooks, Deployments and Memory Stores pages through
 * the deployment's one base URL (an ingress in this process routes Files and Memory to a real apps/files on
 * S3), webhook deliveries to a Standard Webhooks receiver on 127.0.0.1. Screenshots of each step go to
 * tmp/artifacts/console/.
 */
describe('web console in headless Chromium (real API, orchestrator, Temporal, scripted model)', () => {
  let api: ApiUnderTest;
  let orchestrator: AppProcess;
  let files: { url: string; app: AppProcess };
  let ingress: Awaited<ReturnType<typeof startIngress>>;
  let receiver: WebhookReceiver;
  /** The base URL the browser uses: apps/api and apps/files behind one origin, as in `npm run up`. */
  let origin: string;
  const s3 = freshBucketEnv('console');
  const taskQueue = `console-${Date.now()}`;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let key: string;
  let envId: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npx nx run console:build first`);
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: bash tools/ci/services.sh start obstools`);
    mkdirSync(ARTIFACTS, { recursive: true });
    // Priced model `m`: the list cost and the budget are real numbers on the page.
    api = await startApi('console', {
      MANGO_MODEL_PRICES: PRICES,
      MANGO_VAULT_KEYRING: VAULT_KEYRING,
      MANGO_WEBHOOK_SECRETS_KEY: WEBHOOK_KEY,
      MANGO_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      // Deployments' schedules live in Temporal, on the orchestrator's task queue.
      MANGO_TEMPORAL_ADDRESS: process.env.MANGO_TEMPORAL_ADDRESS!,
      MANGO_TASK_QUEUE: taskQueue,
      ...s3,
    });
    files = await startFilesApp(api.db.url, s3);
    ingress = await startIngress({ apiUrl: api.url, filesUrl: files.url });
    origin = ingress.url;
    receiver = await new WebhookReceiver().start();
    model = await startScriptedModel();
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue,
      modelUrl: model.url,
      env: {
        MANGO_MODEL_PRICES: PRICES,
        MANGO_VAULT_KEYRING: VAULT_KEYRING,
        MANGO_WEBHOOK_SECRETS_KEY: WEBHOOK_KEY,
        MANGO_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      },
    });
    key = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(origin, key);
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await orchestrator?.stop();
    await model?.close();
    await receiver?.close();
    await ingress?.close();
    await files?.app.stop();
    await api?.close();
    await dropBucket(s3);
  });

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const bodyText = () => page.evaluate(() => document.body.innerText);
  async function textUntil(ok: (text: string) => boolean, label: string, ms = 30_000): Promise<string> {
    const deadline = Date.now() + ms;
    let text = '';
    while (Date.now() < deadline) {
      text = await bodyText();
      if (ok(text)) return text;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`${label}: the page shows\n${text}`);
  }
  const has = (s: string) => (t: string) => t.includes(s);
  const events = async (sessionId: string) =>
    (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data as Array<Record<string, any>>;
  async function waitForEvents(sessionId: string, ok: (list: Array<Record<string, any>>) => boolean) {
    for (let i = 0; i < 300; i++) {
      const list = await events(sessionId);
      if (ok(list)) return list;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`events never matched: ${JSON.stringify((await events(sessionId)).map((e) => e.type))}`);
  }

  it('serves the built console under /console with a strict content security policy', async () => {
    const res = await fetch(`${api.url}/console/sessions/anything`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await res.text()).toContain('<div id="app">');
    const redirect = await fetch(`${api.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/console/');
    // A missing asset is the API's 404 envelope, not the page.
    const missing = await fetch(`${api.url}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).type).toBe('error');
    // The console is no part of the /v1 contract: /v1 still requires a key.
    expect((await fetch(`${api.url}/v1/sessions`)).status).toBe(401);
  });

  it('signs in, follows a Session live, sends a message, answers an approval and interrupts', async () => {
    model.script({
      content: [{ type: 'text', text: 'Hello from the model.' }],
      usage: { input_tokens: 1000, output_tokens: 200 },
    });
    const agent = (
      await ws.post('/v1/agents', {
        name: 'careful',
        model: 'm',
        tools: [
          {
            type: 'agent_toolset_20260401',
            configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }],
          },
        ],
      })
    ).body.id;
    const created = await ws.post('/v1/sessions', {
      agent,
      environment_id: envId,
      title: 'console tour',
      budget: { type: 'limit', max_list_cost: { amount: '500', currency: 'USD' } },
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi there' }] }],
    });
    expect(created.body).toMatchObject({ status: 'running' });
    const s = created.body;
    await waitForEvents(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));

    // Sign-in: a wrong key is refused on the page and nothing is stored.
    await page.goto(`${origin}/console/`, { waitUntil: 'networkidle0' });
    await page.type('input[name=api_key]', 'mango_ak_not-a-real-key');
    await page.click('button[type=submit]');
    await page.waitForSelector('[role=alert]');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.$eval('input[name=api_key]', (el) => ((el as HTMLInputElement).value = ''));
    await page.type('input[name=api_key]', key);
    await shot('01-sign-in');
    await page.click('button[type=submit]');

    // The Sessions list: status, Agent, usage, cost against budget.
    await page.waitForSelector('[data-testid=sessions]');
    let text = await textUntil(has('console tour'), 'sessions list');
    expect(text).toContain('careful v1');
    expect(text).toContain('idle');
    expect(text).toMatch(/\$0\.\d\d \/ \$5\.00/);
    await shot('02-sessions');
    // The key lives in sessionStorage only and is never rendered (only its hint).
    expect(await page.evaluate(() => sessionStorage.getItem('mango.console.api_key'))).toBe(key);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.cookies()).toEqual([]);
    expect(await page.content()).not.toContain(key);
    expect(await page.$eval('[data-testid=key-hint]', (el) => el.textContent)).toContain(key.slice(-4));

    // The Session view: history from the stream, grouped by model request.
    await page.click(`a[href="/console/sessions/${s.id}"]`);
    text = await textUntil(has('Hello from the model.'), 'session history');
    expect(text).toContain('you hi there');
    expect(await page.$$('[data-testid=model-request]')).toHaveLength(1);
    await textUntil((t) => /stream live/.test(t), 'stream live');

    // Live: a message from another client is answered; the page shows both without a reload.
    model.script((body) => ({
      content: [{ type: 'text', text: `You said: ${body.messages.at(-1).content[0].text}` }],
    }));
    await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'sent from elsewhere' }] }],
    });
    text = await textUntil(has('You said: sent from elsewhere'), 'live answer');
    expect(text).toContain('you sent from elsewhere');
    await shot('03-session-live');

    // A message typed on the page, then an always_ask tool call answered there (denied with a reason).
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'rm -rf /tmp/x' } }],
        stop_reason: 'tool_use',
      },
      (body) => ({
        content: [{ type: 'text', text: `Understood: ${body.messages.at(-1).content[0].content}` }],
      }),
    );
    await page.type('input[name=message]', 'clean up');
    await page.click('.composer button[type=submit]');
    await page.waitForSelector('[data-testid=approvals]', { timeout: 30_000 });
    text = await textUntil(has('awaiting approval'), 'awaiting approval');
    expect(text).toContain('rm -rf /tmp/x');
    await shot('04-approval-pending');
    const sent = (await events(s.id)).filter(
      (e) => e.type === 'user.message' && e.content[0].text === 'clean up',
    );
    expect(sent).toHaveLength(1);
    const use = (await events(s.id)).find((e) => e.type === 'agent.tool_use')!;
    expect(use.evaluated_permission).toBe('ask');
    await page.type('.deny-reason', 'not on this machine');
    await page.click(`[data-tool-use="${use.id}"] button.deny`);
    text = await textUntil(has('Understood: not on this machine'), 'denial answered');
    expect(text).toContain('denied: not on this machine');
    expect(await page.$('[data-testid=approvals]')).toBeNull();
    const confirmation = (await events(s.id)).find((e) => e.type === 'user.tool_confirmation')!;
    expect(confirmation).toMatchObject({
      tool_use_id: use.id,
      result: 'deny',
      deny_message: 'not on this machine',
    });
    await shot('05-approval-answered');

    // Interrupt: a slow model reply keeps the turn running; the button interrupts it.
    model.script({ content: [{ type: 'text', text: 'never shown' }], delayMs: 60_000 });
    await page.type('input[name=message]', 'take your time');
    await page.click('.composer button[type=submit]');
    await textUntil((t) => /take your time/.test(t) && /\brunning\b/.test(t), 'running');
    // The model request has started (the turn is in its 60 s reply) and the page has rendered it: the
    // transcript stops growing, so the composer stays where it is while it is clicked (one CI run's click
    // by coordinates landed beside a button that the transcript's last rows had just moved).
    await waitForEvents(s.id, (l) => l.at(-1)?.type === 'span.model_request_start');
    await page.waitForSelector('button.interrupt:not([disabled])');
    await new Promise((r) => setTimeout(r, 500));
    await page.click('button.interrupt');
    await waitForEvents(s.id, (l) => l.some((e) => e.type === 'user.interrupt'));
    await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'idle', {
      timeout: 30_000,
    });
    expect(await bodyText()).not.toContain('never shown');
    expect((await events(s.id)).filter((e) => e.type === 'user.interrupt')).toHaveLength(1);

    // Usage against budget is shown: tokens of every model request so far, the Session's list cost.
    const cost = (await ws.get(`/v1/sessions/${s.id}`)).body.usage.list_cost;
    expect(cost).toBeTruthy();
    const ends = (await events(s.id)).filter((e) => e.type === 'span.model_request_end' && e.model_usage);
    const tokensIn = ends.reduce((n, e) => n + e.model_usage.input_tokens, 0);
    expect(tokensIn).toBeGreaterThan(1000);
    const usage = await page.$eval('[data-testid=usage]', (el) => el.textContent ?? '');
    expect(usage).toContain(`tokens in ${tokensIn} `);
    expect(usage).toContain(`of $5.00`);
    expect(usage).toContain(`$${(Number(cost.amount) / 100).toFixed(2)}`);
    await shot('06-session-interrupted');

    // A deep link to one event scrolls to it and marks it.
    const answer = (await events(s.id)).find((e) => e.type === 'agent.message')!;
    await page.goto(`${origin}/console/sessions/${s.id}#${answer.id}`, { waitUntil: 'networkidle2' });
    await page.waitForSelector(`[id="${answer.id}"].linked`, { timeout: 30_000 });
    await shot('07-deep-link');
  }, 300_000);

  it('shows Environments with queue stats and healthchecks, and Agents with their versions', async () => {
    await page.goto(`${origin}/console/environments`, { waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=queue-stats]');
    let text = await textUntil(has('pool'), 'environments');
    expect(text).toContain('workers polling');
    await page.click('[data-testid=environment] h3 button');
    await page.waitForSelector('[data-testid=healthchecks]', { timeout: 30_000 });
    const checks = (await ws.get(`/v1/environments/${envId}/work?limit=50`)).body.data as Array<
      Record<string, any>
    >;
    const check = checks.find((w) => w.data?.type === 'healthcheck')!;
    expect(check).toBeTruthy();
    text = await textUntil(has(check.id), 'healthcheck listed');
    expect(text).toContain('queued');
    await shot('08-environments');

    await ws.post(`/v1/agents/${(await ws.get('/v1/agents?limit=1')).body.data[0].id}`, {
      version: 1,
      description: 'second version',
    });
    await page.goto(`${origin}/console/agents`, { waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=agent]');
    await page.click('[data-testid=agent] button');
    await page.waitForSelector('[data-testid=versions]');
    text = await textUntil(has('v2'), 'agent versions');
    expect(text).toContain('bash: always_ask');
    expect(await page.$$('[data-testid=versions] tbody tr')).toHaveLength(2);
    await shot('09-agents');
  }, 120_000);

  it('shows Files, Vaults, Webhooks, Deployments and Memory Stores with their details, never a secret', async () => {
    const noSecret = async (extra: string[] = []) => {
      const html = await page.content();
      for (const secret of [...Object.values(SECRETS), ...extra, key]) expect(html).not.toContain(secret);
    };
    // Empty states, before anything exists.
    for (const [path, empty] of [
      ['files', 'No Files yet.'],
      ['vaults', 'No Vaults yet.'],
      ['webhooks', 'No webhook endpoints yet.'],
      ['deployments', 'No Deployments yet.'],
      ['memory_stores', 'No Memory Stores yet.'],
    ]) {
      await page.goto(`${origin}/console/${path}`, { waitUntil: 'networkidle2' });
      await page.waitForSelector('[data-testid=empty]');
      expect(await page.$eval('[data-testid=empty]', (el) => el.textContent)).toBe(empty);
    }

    // One of each, through the public API on the one base URL.
    const hook = await ws.post('/v1/webhooks', {
      url: `${receiver.url}/console`,
      event_types: ['vault.created'],
      description: 'console hook',
    });
    expect(hook.status).toBe(201);
    const signingSecret: string = hook.body.secret;
    expect(signingSecret).toMatch(/^whsec_/);
    receiver.trust(signingSecret);
    const form = new FormData();
    form.append(
      'file',
      new Blob(['hello from the console test\n'], { type: 'text/plain' }),
      'console-notes.txt',
    );
    const upload = await fetch(`${origin}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(upload.status).toBe(201);
    const file = (await upload.json()) as { id: string };
    const vault = (await ws.post('/v1/vaults', { display_name: 'console vault' })).body;
    const bearer = await ws.post(`/v1/vaults/${vault.id}/credentials`, {
      display_name: 'github bearer',
      auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: SECRETS.bearer },
    });
    expect(bearer.status).toBe(201);
    const oauth = await ws.post(`/v1/vaults/${vault.id}/credentials`, {
      display_name: 'linear oauth',
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: 'https://oauth.example.com/mcp',
        access_token: SECRETS.access,
        expires_at: '2026-12-31T13:00:00Z',
        refresh: {
          client_id: 'console-client',
          refresh_token: SECRETS.refresh,
          token_endpoint: 'https://auth.example.com/oauth/token',
          token_endpoint_auth: { type: 'client_secret_post', client_secret: SECRETS.client },
        },
      },
    });
    expect(oauth.status).toBe(201);
    const store = (await ws.post('/v1/memory_stores', { name: 'console store', description: 'team notes' }))
      .body;
    const memory = await ws.post(`/v1/memory_stores/${store.id}/memories`, {
      path: '/notes/todo.md',
      content: 'buy milk',
    });
    expect(memory.status).toBe(201);
    const agent = (await ws.post('/v1/agents', { name: 'reporter', model: 'm' })).body.id;
    model.script({ content: [{ type: 'text', text: 'Report written.' }] });
    const created = await ws.post('/v1/deployments', {
      name: 'nightly console report',
      agent,
      environment_id: envId,
      schedule: { type: 'cron', expression: '0 9 * * *', timezone: 'UTC' },
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Write the report' }] }],
    });
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^depl_/), status: 'active' });
    const deployment = created.body;
    const run = await ws.post(`/v1/deployments/${deployment.id}/run`);
    expect(run.status).toBe(201);
    // The vault.created event reached the receiver, verified with the signing secret.
    const got = await receiver.waitFor('/console', (g) => g.some((r) => r.verifiedWith.length > 0));
    expect(got[0].event?.data.type).toBe('vault.created');

    await page.goto(`${origin}/console/files`, { waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=files]');
    let text = await textUntil(has(file.id), 'files');
    expect(text).toContain('console-notes.txt');
    expect(text).toContain('text/plain');
    await noSecret();
    await shot('10-files');

    await page.goto(`${origin}/console/vaults`, { waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=vault]');
    await page.click('[data-testid=vault] button.toggle');
    await page.waitForSelector('[data-testid=credentials]');
    text = await textUntil(has(oauth.body.id), 'credentials');
    expect(text).toContain('console vault');
    expect(text).toContain(vault.id);
    expect(text).toContain(bearer.body.id);
    expect(text).toContain('github bearer');
    expect(text).toContain('https://oauth.example.com/mcp');
    expect(text).toContain('client console-client');
    await noSecret();
    await shot('11-vaults');

    await page.goto(`${origin}/console/webhooks`, { waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=webhook]');
    await page.click('[data-testid=webhook] button.toggle');
    const delivery = (await ws.get(`/v1/webhooks/${hook.body.id}/deliveries`)).body.data[0];
    expect(delivery).toBeTruthy();
    text = await textUntil((t) => t.includes(delivery.id) && t.includes('succeeded'), 'deliveries', 30_000);
    expect(text).toContain(hook.body.id);
    expect(text).toContain(`${receiver.url}/console`);
    expect(text).toContain('vault.created');
    expect(text).toContain('#1 200');
    await noSecret([signingSecret]);
    await shot('12-webhooks');

    await page.goto(`${origin}/console/deployments`, { waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=deployment]');
    await page.click('[data-testid=deployment] button.toggle');
    await page.waitForSelector('[data-testid=runs]');
    text = await textUntil(has(run.body.id), 'deployment runs');
    expect(text).toContain('nightly console report');
    expect(text).toContain(deployment.id);
    expect(text).toContain('cron 0 9 * * * (UTC)');
    expect(text).toContain('manual');
    expect(text).toContain(run.body.session_id);
    await noSecret();
    await shot('13-deployments');
    // Archived (which also removes its Temporal Schedule), it is still listed, marked archived.
    expect((await ws.post(`/v1/deployments/${deployment.id}/archive`)).status).toBe(200);
    await page.reload({ waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=deployment]');
    text = await textUntil(has('archived'), 'archived deployment');
    expect(text).toContain(deployment.id);

    await page.goto(`${origin}/console/memory_stores`, { waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=memory-store]');
    await page.click('[data-testid=memory-store] button.toggle');
    await page.waitForSelector('[data-testid=memories]');
    text = await textUntil(has('/notes/todo.md'), 'memories');
    expect(text).toContain('console store');
    expect(text).toContain(store.id);
    expect(text).toContain(memory.body.id);
    expect(text).toContain('8 B');
    await noSecret();
    await shot('14-memory-stores');

    // A failing read shows the API's error envelope: a key revoked while the tab holds it.
    const doomed = await api.issueKey('wrkspc_default');
    await page.evaluate((k) => sessionStorage.setItem('mango.console.api_key', k), doomed.api_key);
    await api.revokeKey(doomed.id);
    for (const path of ['files', 'vaults', 'webhooks', 'deployments', 'memory_stores']) {
      await page.goto(`${origin}/console/${path}`, { waitUntil: 'networkidle2' });
      await page.waitForSelector('[data-testid=error]');
      expect(await page.$eval('[data-testid=error]', (el) => el.textContent)).toMatch(
        /^authentication_error \(401\): .+ · request \S+/,
      );
    }
    await shot('15-error-envelope');
    await page.evaluate((k) => sessionStorage.setItem('mango.console.api_key', k), key);
  }, 180_000);

  it('changes things: uploads and deletes a File, creates an endpoint (its secret shown once), disables and deletes it, runs and pauses a Deployment, creates a Vault with a bearer credential (never rendered) and archives both, creates a Memory Store, writes and deletes a memory', async () => {
    const accept = (d: { accept: () => Promise<void> }) => void d.accept();
    page.on('dialog', accept); // the confirm() before a delete or a rotation
    /** Clicks the button `testid` inside the item `item` whose text includes `text`. */
    const clickIn = (item: string, text: string, testid: string) =>
      page.evaluate(
        (item, text, testid) => {
          const el = [...document.querySelectorAll(`[data-testid=${item}]`)].find((e) =>
            e.textContent!.includes(text),
          );
          const button = el?.querySelector(`[data-testid=${testid}]`) as HTMLButtonElement | null;
          if (!button) throw new Error(`no ${testid} in a ${item} with ${text}`);
          button.click();
        },
        item,
        text,
        testid,
      );
    /** Opens the details toggle (credentials, memories) of the item `item` whose text includes `text`. */
    const openIn = (item: string, text: string) =>
      page.evaluate(
        (item, text) => {
          const el = [...document.querySelectorAll(`[data-testid=${item}]`)].find((e) =>
            e.textContent!.includes(text),
          );
          const button = el?.querySelector('button.toggle') as HTMLButtonElement | null;
          if (!button) throw new Error(`no toggle in a ${item} with ${text}`);
          button.click();
        },
        item,
        text,
      );
    try {
      // Files: upload from the browser, then delete.
      const dir = mkdtempSync(join(tmpdir(), 'console-upload-'));
      const path = join(dir, 'made-in-console.txt');
      writeFileSync(path, 'uploaded through the console\n');
      await page.goto(`${origin}/console/files`, { waitUntil: 'networkidle2' });
      const input = await page.waitForSelector('[data-testid=upload-file] input[type=file]');
      await (input as any).uploadFile(path);
      await page.click('[data-testid=upload-file] button[type=submit]');
      await textUntil(has('made-in-console.txt'), 'uploaded file');
      rmSync(dir, { recursive: true, force: true }); // uploaded: the browser has read it
      const uploaded = (await ws.get('/v1/files?limit=100')).body.data.find(
        (f: any) => f.filename === 'made-in-console.txt',
      );
      expect(uploaded).toMatchObject({ size_bytes: 29, mime_type: expect.stringMatching(/^text\/plain/) });
      await shot('16-file-uploaded');
      await clickIn('file', uploaded.id, 'delete-file');
      await textUntil((t) => !t.includes(uploaded.id), 'deleted file');
      expect((await ws.get(`/v1/files/${uploaded.id}`)).status).toBe(404);

      // Webhooks: create one; its secret is shown once and verifies a real delivery.
      await page.goto(`${origin}/console/webhooks`, { waitUntil: 'networkidle2' });
      await page.type('[data-testid=create-webhook] input[name=url]', `${receiver.url}/made-in-console`);
      await page.type('[data-testid=create-webhook] input[name=event_types]', 'vault.created');
      await page.type('[data-testid=create-webhook] input[name=description]', 'console-made');
      await page.click('[data-testid=create-webhook] button[type=submit]');
      await page.waitForSelector('[data-testid=webhook-secret] code');
      const secret = await page.$eval('[data-testid=webhook-secret] code', (el) => el.textContent!);
      expect(secret).toMatch(/^whsec_/);
      const made = (await ws.get('/v1/webhooks?limit=100')).body.data.find(
        (w: any) => w.url === `${receiver.url}/made-in-console`,
      );
      expect(made).toMatchObject({
        event_types: ['vault.created'],
        description: 'console-made',
        disabled: false,
      });
      await shot('17-webhook-created');
      receiver.trust(secret);
      await ws.post('/v1/vaults', { display_name: 'for the console endpoint' });
      const got = await receiver.waitFor('/made-in-console', (g) => g.some((r) => r.verifiedWith.length > 0));
      expect(got[0].event?.data.type).toBe('vault.created');
      // Shown once: a reload has no secret on the page.
      await page.reload({ waitUntil: 'networkidle2' });
      await page.waitForSelector('[data-testid=webhook]');
      expect(await page.content()).not.toContain(secret);
      await clickIn('webhook', made.id, 'toggle-webhook');
      await textUntil((t) => /disabled/.test(t), 'disabled endpoint');
      expect((await ws.get(`/v1/webhooks/${made.id}`)).body.disabled).toBe(true);
      await clickIn('webhook', made.id, 'delete-webhook');
      await textUntil((t) => !t.includes(made.id), 'deleted endpoint');
      expect((await ws.get(`/v1/webhooks/${made.id}`)).status).toBe(404);

      // Deployments: run now, then pause.
      const agent = (await ws.post('/v1/agents', { name: 'console runner', model: 'm' })).body.id;
      model.script({ content: [{ type: 'text', text: 'Ran from the console.' }] });
      const deployment = (
        await ws.post('/v1/deployments', {
          name: 'console-run deployment',
          agent,
          environment_id: envId,
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Go' }] }],
        })
      ).body;
      expect(deployment.status).toBe('active');
      await page.goto(`${origin}/console/deployments`, { waitUntil: 'networkidle2' });
      await page.waitForSelector('[data-testid=deployment]');
      await clickIn('deployment', deployment.id, 'run-deployment');
      const deadline = Date.now() + 30_000;
      let runs: any[] = [];
      while (runs.length === 0 && Date.now() < deadline) {
        runs = (await ws.get(`/v1/deployment_runs?deployment_id=${deployment.id}`)).body.data ?? [];
        if (runs.length === 0) await new Promise((r) => setTimeout(r, 250));
      }
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ session_id: expect.stringMatching(/^sesn_/) });
      expect(JSON.stringify(runs[0])).toContain('manual');
      await clickIn('deployment', deployment.id, 'pause-deployment');
      await textUntil(has('Unpause'), 'paused deployment');
      expect((await ws.get(`/v1/deployments/${deployment.id}`)).body.status).toBe('paused');
      await shot('18-deployment-paused');

      // Vaults: create one, add a static_bearer credential (the token goes to the API once and is never
      // on the page or in the tab's storage), archive the credential, then the Vault.
      await page.goto(`${origin}/console/vaults`, { waitUntil: 'networkidle2' });
      await page.type('[data-testid=create-vault] input[name=display_name]', 'console-made vault');
      await page.click('[data-testid=create-vault] button[type=submit]');
      await textUntil(has('console-made vault'), 'created vault');
      const vault = (await ws.get('/v1/vaults?limit=100')).body.data.find(
        (v: any) => v.display_name === 'console-made vault',
      );
      expect(vault).toMatchObject({ id: expect.stringMatching(/^vlt_/), archived_at: null });
      await openIn('vault', vault.id);
      await page.waitForSelector('[data-testid=add-credential]');
      const token = `SECRET-CONSOLE-BEARER-${randomBytes(8).toString('hex')}`;
      await page.type(
        '[data-testid=add-credential] input[name=mcp_server_url]',
        'https://mcp.example.com/console',
      );
      await page.type('[data-testid=add-credential] input[name=token]', token);
      await page.type('[data-testid=add-credential] input[name=display_name]', 'console bearer');
      await page.click('[data-testid=add-credential] button[type=submit]');
      await textUntil(has('console bearer'), 'added credential');
      const [cred, ...more] = (await ws.get(`/v1/vaults/${vault.id}/credentials`)).body.data;
      expect(more).toEqual([]);
      expect(cred).toMatchObject({
        display_name: 'console bearer',
        auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/console' },
      });
      expect(
        await page.$eval(
          '[data-testid=add-credential] input[name=token]',
          (el) => (el as HTMLInputElement).value,
        ),
      ).toBe('');
      expect(await page.content()).not.toContain(token);
      expect(
        await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }) + document.cookie),
      ).not.toContain(token);
      await shot('20-vault-credential-added');
      await clickIn('vault', vault.id, 'archive-credential');
      for (let i = 0; i < 100; i++) {
        if ((await ws.get(`/v1/vaults/${vault.id}/credentials/${cred.id}`)).body.archived_at) break;
        await new Promise((r) => setTimeout(r, 150));
      }
      expect((await ws.get(`/v1/vaults/${vault.id}/credentials/${cred.id}`)).body.archived_at).toEqual(
        expect.any(String),
      );
      await clickIn('vault', vault.id, 'archive-vault');
      for (let i = 0; i < 100; i++) {
        if ((await ws.get(`/v1/vaults/${vault.id}`)).body.archived_at) break;
        await new Promise((r) => setTimeout(r, 150));
      }
      expect((await ws.get(`/v1/vaults/${vault.id}`)).body.archived_at).toEqual(expect.any(String));
      await page.waitForFunction(
        (id) =>
          [...document.querySelectorAll('[data-testid=vault]')].some(
            (e) => e.textContent!.includes(id) && !e.querySelector('[data-testid=archive-vault]'),
          ),
        {},
        vault.id,
      );
      expect(await page.content()).not.toContain(token);

      // Memory Stores (apps/files behind the ingress): create one, write a memory, a second write at the
      // same path is refused with the API's envelope, delete the memory, archive the Store.
      await page.goto(`${origin}/console/memory_stores`, { waitUntil: 'networkidle2' });
      await page.type('[data-testid=create-memory-store] input[name=name]', 'console-made store');
      await page.type('[data-testid=create-memory-store] input[name=description]', 'made in the browser');
      await page.click('[data-testid=create-memory-store] button[type=submit]');
      await textUntil(has('console-made store'), 'created store');
      const store = (await ws.get('/v1/memory_stores?limit=100')).body.data.find(
        (m: any) => m.name === 'console-made store',
      );
      expect(store).toMatchObject({ description: 'made in the browser', archived_at: null });
      await openIn('memory-store', store.id);
      await page.waitForSelector('[data-testid=write-memory]');
      const writeMemory = async () => {
        await page.type('[data-testid=write-memory] input[name=path]', '/made/in-console.md');
        await page.type('[data-testid=write-memory] textarea[name=content]', 'written in the console');
        await page.click('[data-testid=write-memory] button[type=submit]');
      };
      await writeMemory();
      await textUntil(has('/made/in-console.md'), 'written memory');
      const [written, ...others] = (await ws.get(`/v1/memory_stores/${store.id}/memories`)).body.data;
      expect(others).toEqual([]);
      expect(written).toMatchObject({ path: '/made/in-console.md', content_size_bytes: 22 });
      expect((await ws.get(`/v1/memory_stores/${store.id}/memories/${written.id}`)).body.content).toBe(
        'written in the console',
      );
      await shot('21-memory-written');
      await writeMemory();
      await page.waitForSelector('[data-testid=write-memory] [data-testid=error]');
      expect(
        await page.$eval('[data-testid=write-memory] [data-testid=error]', (el) => el.textContent),
      ).toMatch(/^memory_path_conflict_error \(409\): .+ · request \S+/);
      await clickIn('memory-store', store.id, 'delete-memory');
      // (The refused write's message still names the path; the list is what changed.)
      await textUntil(has('No memories in this Store.'), 'deleted memory');
      expect((await ws.get(`/v1/memory_stores/${store.id}/memories/${written.id}`)).status).toBe(404);
      await clickIn('memory-store', store.id, 'archive-memory-store');
      for (let i = 0; i < 100; i++) {
        if ((await ws.get(`/v1/memory_stores/${store.id}`)).body.archived_at) break;
        await new Promise((r) => setTimeout(r, 150));
      }
      expect((await ws.get(`/v1/memory_stores/${store.id}`)).body.archived_at).toEqual(expect.any(String));

      // A refused write shows the API's error envelope beside its button: an endpoint deleted behind the
      // page's back, then disabled from the page.
      const gone = (
        await ws.post('/v1/webhooks', { url: `${receiver.url}/gone`, event_types: ['vault.created'] })
      ).body;
      await page.goto(`${origin}/console/webhooks`, { waitUntil: 'networkidle2' });
      await textUntil(has(gone.id), 'endpoint to delete behind the page');
      expect((await ws.delete(`/v1/webhooks/${gone.id}`)).status).toBe(200);
      await clickIn('webhook', gone.id, 'toggle-webhook');
      await page.waitForSelector('[data-testid=webhook] [data-testid=error]');
      expect(await page.$eval('[data-testid=webhook] [data-testid=error]', (el) => el.textContent)).toMatch(
        /^not_found_error \(404\): .+ · request \S+/,
      );
      await shot('19-write-refused');
    } finally {
      page.off('dialog', accept);
    }
  }, 180_000);

  it('pages the Sessions list past 50 rows and filters it by Agent and status; inspects an event raw; lists the audit log with filters', async () => {
    const agent = (await ws.post('/v1/agents', { name: 'pager-agent', model: 'm' })).body;
    const created: string[] = [];
    for (let i = 0; i < 51; i++)
      created.push(
        (await ws.post('/v1/sessions', { agent: agent.id, environment_id: envId, title: `paged ${i}` })).body
          .id,
      );
    await page.goto(`${origin}/console/`, { waitUntil: 'networkidle0' });
    await page.waitForSelector(
      '[data-testid=session-filters] select[name=agent] option[value="' + agent.id + '"]',
    );
    await page.select('[data-testid=session-filters] select[name=agent]', agent.id);
    const rowCount = () => page.$$eval('[data-testid=sessions] tbody tr', (rows) => rows.length);
    const pageLabel = () => page.$eval('[data-testid=sessions-page]', (e) => (e as HTMLElement).innerText);
    async function until(ok: () => Promise<boolean>, label: string) {
      for (let i = 0; i < 200; i++) {
        if (await ok().catch(() => false)) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${label}: the page shows\n${await bodyText()}`);
    }
    await until(
      async () => (await rowCount()) === 50 && (await bodyText()).includes('paged 50'),
      'first page',
    );
    expect(await pageLabel()).toBe('page 1');
    await shot('sessions-page-1');
    await page.click('[data-testid=sessions-pager] button:last-child');
    await until(async () => (await rowCount()) === 1 && (await pageLabel()) === 'page 2', 'second page');
    // Newest first: the 51st row is the first Session created.
    expect(await bodyText()).toContain('paged 0');
    await shot('sessions-page-2');
    await page.click('[data-testid=sessions-pager] button:first-child');
    await until(
      async () => (await rowCount()) === 50 && (await pageLabel()) === 'page 1',
      'back to the first page',
    );
    await page.select('[data-testid=session-filters] select[name=status]', 'terminated');
    await until(async () => (await bodyText()).includes('No Sessions match'), 'status filter');

    // The event inspector: the raw JSON of each event, as the API returned it.
    await ws.post(`/v1/sessions/${created[0]}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'inspect me' }] }],
    });
    const [sent] = (await events(created[0]!)).filter((e) => e.type === 'user.message');
    await page.goto(`${origin}/console/sessions/${created[0]}`, { waitUntil: 'networkidle2' });
    await page.waitForSelector(`[data-testid=event-raw][data-event-id="${sent!.id}"]`);
    const raw = await page.$eval(
      `[data-testid=event-raw][data-event-id="${sent!.id}"] pre`,
      (e) => e.textContent,
    );
    expect(JSON.parse(raw!)).toMatchObject({
      id: sent!.id,
      type: 'user.message',
      processed_at: sent!.processed_at,
    });

    // The audit log page: the writes above, and a refused one found by its outcome.
    const refused = await ws.post('/v1/agents', { name: 'no model' });
    expect(refused.status).toBe(400);
    await page.goto(`${origin}/console/audit`, { waitUntil: 'networkidle2' });
    await page.waitForSelector('[data-testid=audit]');
    await until(
      async () => (await bodyText()).includes(`POST /v1/sessions/{session_id}/events`),
      'audit rows',
    );
    await page.select('[data-testid=audit-filters] select[name=outcome]', 'failed');
    const outcomes = () =>
      page.$$eval('[data-testid=audit-row] .status', (els) => [...new Set(els.map((e) => e.textContent))]);
    // Filtered: only failed writes, the refused one among them.
    await until(
      async () =>
        JSON.stringify(await outcomes()) === '["failed"]' &&
        (await bodyText()).includes(refused.headers.get('request-id')!),
      'the refused write, filtered by outcome',
    );
    await shot('audit-log');
    expect(await page.content()).not.toContain(key);
  }, 180_000);
});
