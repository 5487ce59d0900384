import { createHash, randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { recordHistory, startOrchestrator } from './support';
import {
  ApiUnderTest,
  AppProcess,
  dropBucket,
  freshBucketEnv,
  httpClient,
  HttpClient,
  McpTestServer,
  ScriptedModelServer,
  numberedText,
  startApi,
  startFilesApp,
  startMcpTestServer,
  startScriptedModel,
} from '@mango/testing';

const KEYRING = `mcp-e2e:${randomBytes(32).toString('base64')}`;
const TOKEN = `mcp-e2e-bearer-${randomBytes(8).toString('hex')}`;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

type Ev = { id: string; type: string; [k: string]: any };

/**
 * Remote MCP end to end: a real MCP server (official SDK, Streamable HTTP, bearer required) in its own
 * process, apps/api with a Vault credential for it, a real orchestrator on Temporal, the scripted model.
 */
describe('remote MCP tools with Vault credentials (real API, orchestrator, Temporal, MCP server)', () => {
  let api: ApiUnderTest;
  let model: ScriptedModelServer;
  let mcp: McpTestServer;
  let orchestrator: AppProcess | undefined;
  let files: { url: string; app: AppProcess } | undefined;
  let ws: HttpClient;
  let envId: string;
  let vaultId: string;
  const queue = `mcp-${Date.now()}`;
  // Files storage: the orchestrator keeps large MCP results as Files in apps/files' bucket.
  const s3 = freshBucketEnv('mcp');
  const orchestratorEnv = {
    ...s3,
    MANGO_VAULT_KEYRING: KEYRING,
    MANGO_MCP_ALLOWED_ADDRESSES: '127.0.0.1/32',
    MANGO_MCP_TIMEOUT_MS: '20000',
    // The test model 'm' is unknown to the built-in profiles; their conservative default window (32,000
    // tokens) cannot take the 100 KB result below, so this suite gives it a standard window.
    MANGO_MODEL_PROFILES: JSON.stringify({ m: { context_window: 200_000 } }),
  };

  beforeAll(async () => {
    api = await startApi('mcp', { MANGO_VAULT_KEYRING: KEYRING });
    model = await startScriptedModel();
    mcp = await startMcpTestServer([TOKEN]);
    files = await startFilesApp(api.db.url, s3);
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: queue,
      modelUrl: model.url,
      env: orchestratorEnv,
    });
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    vaultId = (await ws.post('/v1/vaults', { display_name: 'team' })).body.id;
    const cred = await ws.post(`/v1/vaults/${vaultId}/credentials`, {
      auth: { type: 'static_bearer', mcp_server_url: mcp.url, token: TOKEN },
    });
    if (cred.status !== 201) throw new Error(`credential create answered ${cred.status}`);
  }, 180_000);

  afterAll(async () => {
    await orchestrator?.stop();
    await files?.app.stop();
    await dropBucket(s3).catch(() => undefined);
    await mcp?.stop();
    await model?.close();
    await api?.close();
  });

  const events = async (id: string) =>
    (await ws.get(`/v1/sessions/${id}/events?limit=1000`)).body.data as Ev[];
  async function until(id: string, predicate: (e: Ev[]) => boolean, tries = 900): Promise<Ev[]> {
    for (let i = 0; i < tries; i++) {
      const list = await events(id);
      if (predicate(list)) return list;
      await new Promise((r) => setTimeout(r, 100));
    }
    return events(id);
  }
  const idleCount = (list: Ev[]) => list.filter((e) => e.type === 'session.status_idle').length;

  async function agentWith(url: string, configs: unknown[] = []) {
    return (
      await ws.post('/v1/agents', {
        name: `mcp-${Date.now()}`,
        model: 'm',
        mcp_servers: [{ type: 'url', name: 'tickets', url }],
        tools: [{ type: 'mcp_toolset', mcp_server_name: 'tickets', configs }],
      })
    ).body.id as string;
  }
  const sessions: string[] = [];
  async function session(agent: string, text: string, vaults = [vaultId]) {
    const r = await ws.post('/v1/sessions', {
      agent,
      environment_id: envId,
      vault_ids: vaults,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text }] }],
    });
    expect(r.status).toBe(201);
    sessions.push(r.body.id);
    return r.body.id as string;
  }
  const callTool = (name: string, input: Record<string, unknown>, id = 'toolu_1') => ({
    content: [{ type: 'tool_use', id, name, input }],
    stop_reason: 'tool_use',
  });
  const lastToolResult = (body: any) =>
    body.messages.at(-1).content.find((b: any) => b.type === 'tool_result');

  it('allow: the model sees the MCP tools, the orchestrator calls one with the vault token, one result', async () => {
    let declared: string[] = [];
    model.script(
      (body) => {
        declared = (body.tools ?? []).map((t: any) => t.name);
        return callTool('mcp__tickets__echo', { text: 'hi' });
      },
      (body) => ({ content: [{ type: 'text', text: `got ${lastToolResult(body).content[0].text}` }] }),
    );
    const before = mcp.calls().length;
    const s = await session(await agentWith(mcp.url), 'echo hi');
    const list = await until(s, (l) => idleCount(l) > 0);
    expect(declared.sort()).toEqual([
      'mcp__tickets__big',
      'mcp__tickets__echo',
      'mcp__tickets__image',
      'mcp__tickets__slow',
    ]);
    expect(list.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.mcp_tool_use',
      'span.model_request_end',
      'agent.mcp_tool_result',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    const use = list.find((e) => e.type === 'agent.mcp_tool_use')!;
    expect(use).toMatchObject({
      name: 'echo',
      mcp_server_name: 'tickets',
      input: { text: 'hi' },
      evaluated_permission: 'allow',
    });
    expect(use._model_name).toBeUndefined();
    const result = list.find((e) => e.type === 'agent.mcp_tool_result')!;
    expect(result).toMatchObject({
      mcp_tool_use_id: use.id,
      is_error: false,
      content: [{ type: 'text', text: 'echo: hi' }],
    });
    expect(list.find((e) => e.type === 'agent.message')!.content[0].text).toBe('got echo: hi');
    const calls = mcp.calls().slice(before);
    expect(calls).toEqual([{ mcp_call: 'echo', args: { text: 'hi' }, token_sha256: sha256(TOKEN) }]);
    await recordHistory(s, 'session-mcp-allow');
  }, 120_000);

  it('ask waits for user.tool_confirmation; deny never calls; an asked call the user denies is never made', async () => {
    const agent = await agentWith(mcp.url, [
      { name: 'echo', permission_policy: { type: 'always_ask' } },
      { name: 'big', permission_policy: { type: 'deny' } },
    ]);
    model.script(callTool('mcp__tickets__echo', { text: 'asked' }));
    const before = mcp.calls().length;
    const s = await session(agent, 'ask me');
    const idle = await until(s, (l) => idleCount(l) > 0);
    const use = idle.find((e) => e.type === 'agent.mcp_tool_use')!;
    expect(use.evaluated_permission).toBe('ask');
    expect(idle.at(-1)).toMatchObject({
      type: 'session.status_idle',
      stop_reason: { type: 'requires_action', event_ids: [use.id] },
    });
    expect(mcp.calls().length).toBe(before);
    model.script((body) => ({
      content: [{ type: 'text', text: `after: ${lastToolResult(body).content[0].text}` }],
    }));
    const conf = await ws.post(`/v1/sessions/${s}/events`, {
      events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }],
    });
    expect(conf.status).toBe(200);
    const done = await until(s, (l) => idleCount(l) > 1);
    expect(done.filter((e) => e.type === 'agent.mcp_tool_result')).toHaveLength(1);
    expect(done.find((e) => e.type === 'agent.message')!.content[0].text).toBe('after: echo: asked');
    expect(
      mcp
        .calls()
        .slice(before)
        .map((c) => c.mcp_call),
    ).toEqual(['echo']);

    // deny: the call is resolved without reaching the server; the model learns it was denied.
    model.script(callTool('mcp__tickets__big', { bytes: 10 }, 'toolu_d'), (body) => ({
      content: [{ type: 'text', text: `denied: ${lastToolResult(body).is_error}` }],
    }));
    const s2 = await session(agent, 'deny me');
    const denied = await until(s2, (l) => idleCount(l) > 0);
    expect(denied.find((e) => e.type === 'agent.mcp_tool_use')!.evaluated_permission).toBe('deny');
    expect(denied.filter((e) => e.type === 'agent.mcp_tool_result')).toHaveLength(0);
    expect(denied.find((e) => e.type === 'agent.message')!.content[0].text).toBe('denied: true');
    expect(
      mcp
        .calls()
        .slice(before)
        .map((c) => c.mcp_call),
    ).toEqual(['echo']);
  }, 180_000);

  it('auto: a judged allow calls the server; a judged ask waits; the decision and reason are on agent.mcp_tool_use', async () => {
    const agent = await agentWith(mcp.url, [{ name: 'echo', permission_policy: { type: 'auto' } }]);
    const judge = (decision: string, reason: string) => ({
      content: [{ type: 'text', text: JSON.stringify({ decision, reason }) }],
    });
    const before = mcp.calls().length;
    model.script(
      callTool('mcp__tickets__echo', { text: 'judged' }),
      judge('allow', 'Echoing text is harmless.'),
      (body) => ({ content: [{ type: 'text', text: `got ${lastToolResult(body).content[0].text}` }] }),
    );
    const s = await session(agent, 'echo it');
    const list = await until(s, (l) => idleCount(l) > 0);
    const judgement = model.requests.find((r) =>
      r.body.messages[0]?.content?.includes?.('tool: echo (MCP server "tickets")'),
    );
    expect(judgement!.body.messages[0].content).toBe(
      '<agent_instructions>\n(none)\n</agent_instructions>\n<tool_call>\ntool: echo (MCP server "tickets")\ninput: {"text":"judged"}\n</tool_call>',
    );
    const use = list.find((e) => e.type === 'agent.mcp_tool_use')!;
    expect(use).toMatchObject({
      name: 'echo',
      evaluated_permission: 'allow',
      evaluation: {
        type: 'auto',
        evaluated_permission: { type: 'allow' },
        reason: 'Echoing text is harmless.',
      },
    });
    expect(list.find((e) => e.type === 'agent.message')!.content[0].text).toBe('got echo: judged');
    expect(
      mcp
        .calls()
        .slice(before)
        .map((c) => c.mcp_call),
    ).toEqual(['echo']);

    model.script(callTool('mcp__tickets__echo', { text: 'risky' }), judge('ask', 'Unclear intent.'));
    const s2 = await session(agent, 'echo risky');
    const idle = await until(s2, (l) => idleCount(l) > 0);
    const asked = idle.find((e) => e.type === 'agent.mcp_tool_use')!;
    expect(asked).toMatchObject({
      evaluated_permission: 'ask',
      evaluation: {
        evaluated_permission: { type: 'ask', reason_code: 'judged_ask' },
        reason: 'Unclear intent.',
      },
    });
    expect(idle.at(-1)!.stop_reason).toEqual({ type: 'requires_action', event_ids: [asked.id] });
    expect(
      mcp
        .calls()
        .slice(before)
        .map((c) => c.mcp_call),
    ).toEqual(['echo']);
  }, 180_000);

  it('a large text result is kept whole as a File (the model gets the bound and the File id); a binary result is refused', async () => {
    let seen: any;
    model.script(callTool('mcp__tickets__big', { bytes: 300_000, numbered: true }), (body) => {
      seen = lastToolResult(body);
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    const s = await session(await agentWith(mcp.url), 'big');
    const list = await until(s, (l) => idleCount(l) > 0);
    const use = list.find((e) => e.type === 'agent.mcp_tool_use')!;
    const big = list.find((e) => e.type === 'agent.mcp_tool_result')!;
    const whole = numberedText(300_000);
    expect(big.is_error).toBe(false);
    // The File id is derived from the call (a retried call never makes a second File).
    expect(big.file_id).toBe(`file_${use.id.slice('sevt_'.length)}`);
    expect(big.content[0].text.startsWith(whole.slice(0, 100_000))).toBe(true);
    expect(big.content[0].text).toContain(
      `[Result truncated: 100000 of 300000 bytes shown. The complete result is File ${big.file_id}.]`,
    );
    // The model got the same bounded text with the File id.
    expect(seen.content[0].text).toBe(big.content[0].text);
    // The File is the Workspace's: listed and downloadable through apps/files with the Workspace key.
    const key = (await api.issueKey('wrkspc_default')).api_key;
    const filesWs = httpClient(files!.url, key);
    const meta = await filesWs.get(`/v1/files/${big.file_id}`);
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({ id: big.file_id, size_bytes: 300_000, mime_type: 'text/plain' });
    const download = await fetch(`${files!.url}/v1/files/${big.file_id}/content`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(whole, 'utf8'))).toBe(true);
    // The turn goes on with the bounded result: the model's next reply is recorded.
    expect(list.filter((e) => e.type === 'agent.message').map((e) => e.content[0].text)).toEqual(['ok']);

    model.script(callTool('mcp__tickets__image', {}), { content: [{ type: 'text', text: 'ok' }] });
    const s2 = await session(await agentWith(mcp.url), 'image');
    const img = (await until(s2, (l) => idleCount(l) > 0)).find((e) => e.type === 'agent.mcp_tool_result')!;
    expect(img.is_error).toBe(true);
    expect(img.content[0].text).toMatch(/does not support \(image\).*binary content/);
  }, 180_000);

  it('a private-address MCP URL is refused (mcp_connection_failed_error) and nothing is sent to it', async () => {
    model.script((body) => ({ content: [{ type: 'text', text: `tools: ${(body.tools ?? []).length}` }] }));
    const s = await session(await agentWith('http://192.168.77.1/mcp'), 'private');
    const list = await until(s, (l) => idleCount(l) > 0);
    expect(list.find((e) => e.type === 'session.error')).toMatchObject({
      error: {
        type: 'mcp_connection_failed_error',
        mcp_server_name: 'tickets',
        message: expect.stringMatching(/192\.168\.77\.1 is a private address/),
      },
    });
    expect(list.find((e) => e.type === 'agent.message')!.content[0].text).toBe('tools: 0');
  }, 120_000);

  it('without a matching credential the server refuses: mcp_authentication_failed_error', async () => {
    model.script({ content: [{ type: 'text', text: 'no tools' }] });
    const s = await session(await agentWith(mcp.url), 'no vault', []);
    const list = await until(s, (l) => idleCount(l) > 0);
    expect(list.find((e) => e.type === 'session.error')).toMatchObject({
      error: { type: 'mcp_authentication_failed_error', mcp_server_name: 'tickets' },
    });
  }, 120_000);

  it('kill -9 of the orchestrator mid-call: one result (outcome unknown), the server saw the call once', async () => {
    model.script(callTool('mcp__tickets__slow', { ms: 15_000, text: 'slow' }), (body) => ({
      content: [{ type: 'text', text: `after crash: ${lastToolResult(body).is_error}` }],
    }));
    const before = mcp.calls().length;
    const s = await session(await agentWith(mcp.url), 'slow');
    for (
      let i = 0;
      i < 600 &&
      !mcp
        .calls()
        .slice(before)
        .some((c) => c.mcp_call === 'slow');
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    expect(
      mcp
        .calls()
        .slice(before)
        .map((c) => c.mcp_call),
    ).toEqual(['slow']);
    expect(await orchestrator!.stop('SIGKILL')).toBeNull();
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: queue,
      modelUrl: model.url,
      env: orchestratorEnv,
    });
    const list = await until(s, (l) => idleCount(l) > 0, 1200);
    const results = list.filter((e) => e.type === 'agent.mcp_tool_result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/outcome of this MCP tool call is unknown/) }],
    });
    expect(list.find((e) => e.type === 'agent.message')!.content[0].text).toBe('after crash: true');
    // Long after the server's delay, it still saw the call exactly once.
    await new Promise((r) => setTimeout(r, 2000));
    expect(
      mcp
        .calls()
        .slice(before)
        .filter((c) => c.mcp_call === 'slow'),
    ).toHaveLength(1);
    expect((await events(s)).filter((e) => e.type === 'agent.mcp_tool_result')).toHaveLength(1);
  }, 240_000);

  it('no secret in any log of the run nor in any Temporal history of its Sessions', async () => {
    const secrets = [TOKEN, KEYRING.split(':')[1]!];
    for (const logs of [api.app.logs(), orchestrator!.logs(), mcp.process.logs()])
      for (const secret of secrets) expect(logs).not.toContain(secret);
    const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
    try {
      const client = new Client({ connection });
      expect(sessions.length).toBeGreaterThanOrEqual(7);
      for (const id of sessions) {
        const history = JSON.stringify(await client.workflow.getHandle(id).fetchHistory());
        expect(history.length).toBeGreaterThan(1000);
        // Payloads are base64 JSON: decode every data field and search the plain text as well.
        const decoded = [...history.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)]
          .map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'))
          .join('\n');
        expect(decoded).toContain(id);
        for (const secret of secrets) {
          expect(history).not.toContain(secret);
          expect(decoded).not.toContain(secret);
        }
      }
    } finally {
      await connection.close();
    }
  });
});
