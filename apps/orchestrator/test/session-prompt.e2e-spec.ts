import { SANDBOX_TOOL_DEFINITIONS, SANDBOX_TOOL_NAMES } from '@mango/domain-agents';
import { AppProcess, freshBucketEnv, HttpClient, ScriptedModelServer, webSearchReply } from '@mango/testing';
import { SessionStack, STACK_TIMEOUT_MS, startSessionStack } from './support';

/**
 * What the model sees (docs/api-guide.md "What the model sees") over real processes — apps/api,
 * apps/files (S3), the orchestrator on Temporal and PostgreSQL, the scripted model recording requests:
 * an Agent with a Skill, an attached Memory Store, the web tools and a custom tool produces exactly the
 * documented system text and tool list; the Skill is activated from Mango's kept copy; a web search
 * the endpoint ran is recorded as events and carried into the next request; an endpoint that rejects
 * the web tools gives a clear session.error; an oversized Skill set is refused at Session create.
 */

const say = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });

const SKILL_MD =
  '---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n\n# PDF tools\n\nRead forms.md first, then run scripts/fill.py.\n';

describe('what the model sees (real API, files, orchestrator, Temporal, S3, scripted model)', () => {
  let files: { url: string; app: AppProcess };
  let stack: SessionStack;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let key: string;
  let envId: string;
  const s3 = freshBucketEnv('prompt');

  beforeAll(async () => {
    stack = await startSessionStack('prompt', { files: s3, environment: true });
    ({ model, ws, key } = stack);
    files = stack.files!;
    envId = stack.environmentId!;
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  async function uploadSkill(parts: Array<[string, string | Buffer]>): Promise<string> {
    const form = new FormData();
    for (const [path, content] of parts) form.append('files[]', new Blob([content]), path);
    const res = await fetch(`${files.url}/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  async function events(sessionId: string) {
    return (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data as Array<{
      id: string;
      type: string;
      [k: string]: any;
    }>;
  }

  async function idles(sessionId: string, n: number) {
    for (let i = 0; i < 900; i++) {
      const list = await events(sessionId);
      if (list.filter((e) => e.type === 'session.status_idle').length >= n) return list;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`session ${sessionId} did not reach ${n} idles`);
  }

  it('Skills, Memory, web and custom tools: the exact request; activation; a web search carried on', async () => {
    const skillId = await uploadSkill([
      ['pdf-tools/SKILL.md', SKILL_MD],
      ['pdf-tools/forms.md', 'Form rules: sign last.\n'],
      ['pdf-tools/scripts/fill.py', 'print("fill")\n'],
      ['pdf-tools/logo.bin', Buffer.from([0, 1, 2, 3])],
    ]);
    const storeRes = await fetch(`${files.url}/v1/memory_stores`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'User preferences' }),
    });
    expect(storeRes.status).toBe(201);
    const storeId = ((await storeRes.json()) as { id: string }).id;
    const lookup = {
      type: 'custom',
      name: 'lookup_order',
      description: 'Find an order by id',
      input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    };
    const agent = await ws.post('/v1/agents', {
      name: 'clerk',
      model: 'claude-sonnet-4-6',
      system: 'You are terse.',
      tools: [
        {
          type: 'agent_toolset_20260401',
          configs: [
            { name: 'web_search', allowed_domains: ['example.com'] },
            { name: 'web_fetch', max_content_tokens: 5000 },
          ],
        },
        lookup,
      ],
      skills: [{ type: 'custom', skill_id: skillId }],
    });
    expect(agent.status).toBe(201);

    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'activate_skill', input: { name: 'pdf-tools' } }],
        stop_reason: 'tool_use',
      },
      webSearchReply(
        'srvtoolu_1',
        'pdf form rules',
        [{ url: 'https://example.com/forms', title: 'Forms' }],
        'Done.',
      ),
      { content: [{ type: 'text', text: 'Again.' }] },
    );
    const session = await ws.post('/v1/sessions', {
      agent: agent.body.id,
      environment_id: envId,
      resources: [
        {
          type: 'memory_store',
          memory_store_id: storeId,
          access: 'read_only',
          instructions: 'Check before answering.',
        },
      ],
      initial_events: [say('fill the form')],
    });
    expect(session.status).toBe(201);
    const sid = session.body.id as string;
    expect(session.body.resources[0].mount_path).toBe('/mnt/memory/user-preferences');
    const first = await idles(sid, 1);

    // 1. The exact request: system text and tools as docs/api-guide.md states them.
    const req = model.requests[0]!;
    expect(req.body.system).toBe(
      [
        'You are terse.',
        '# Skills',
        'These Skills are available in the sandbox. Each is a directory of instructions and supporting files at the path shown, relative to the working directory. When a task matches a Skill, call the activate_skill tool with its name to load its instructions before you start, then follow them.',
        '<skill name="pdf-tools" path="skills/pdf-tools/">\nFill and merge PDF forms.\n</skill>',
        '# Memory',
        'These Memory Stores are mounted in the sandbox as directories of text files. Files you write in a read_write store persist after this Session; a read_only store cannot be changed. Read what is relevant before you start, and keep what you learn in the store as its instructions say.',
        '<memory_store name="User preferences" path="/mnt/memory/user-preferences" access="read_only">\nCheck before answering.\n</memory_store>',
      ].join('\n\n'),
    );
    expect(req.body.tools).toEqual([
      ...SANDBOX_TOOL_NAMES.map((name) => ({ name, ...SANDBOX_TOOL_DEFINITIONS[name] })),
      {
        name: 'activate_skill',
        description:
          "Load a Skill's instructions: its SKILL.md and the text files it references, from Mango's archive. With path, load one other text file of the Skill (relative to the Skill's directory).",
        input_schema: {
          type: 'object',
          properties: { name: { type: 'string', enum: ['pdf-tools'] }, path: { type: 'string' } },
          required: ['name'],
        },
      },
      { name: 'lookup_order', description: lookup.description, input_schema: lookup.input_schema },
      { type: 'web_search_20250305', name: 'web_search', allowed_domains: ['example.com'] },
      { type: 'web_fetch_20250910', name: 'web_fetch', max_content_tokens: 5000 },
    ]);
    expect(req.headers['anthropic-beta']).toContain('web-fetch-2025-09-10');
    // The report shows one recorded request.
    if (process.env.PRINT_MODEL_REQUEST)
      console.log(
        JSON.stringify(
          { system: req.body.system, tools: req.body.tools, messages: req.body.messages },
          null,
          1,
        ),
      );

    // 2. The activation was answered by the orchestrator from Mango's copy (no worker ever ran).
    const activation = first.find((e) => e.type === 'agent.tool_use' && e.name === 'activate_skill')!;
    expect(activation).toMatchObject({ input: { name: 'pdf-tools' }, evaluated_permission: 'allow' });
    const answer = first.find((e) => e.type === 'agent.tool_result' && e.tool_use_id === activation.id)!;
    const skillText =
      `<skill name="pdf-tools" path="skills/pdf-tools/">\n<file path="SKILL.md">\n${SKILL_MD}\n</file>\n` +
      '<file path="forms.md">\nForm rules: sign last.\n\n</file>\n<file path="scripts/fill.py">\nprint("fill")\n\n</file>\n</skill>\n' +
      'Other files of this Skill (under skills/pdf-tools/; text files load with activate_skill and path): logo.bin';
    expect(answer).toMatchObject({ is_error: false, content: [{ type: 'text', text: skillText }] });
    expect(model.requests[1]!.body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: activation.id,
          content: [{ type: 'text', text: skillText }],
          is_error: false,
        },
      ],
    });

    // 3. The web search the endpoint ran: hosted-shaped events, then the turn ended.
    const search = first.find((e) => e.type === 'agent.tool_use' && e.name === 'web_search')!;
    expect(search).toMatchObject({ input: { query: 'pdf form rules' }, evaluated_permission: 'allow' });
    expect(Object.keys(search).some((k) => k.startsWith('_'))).toBe(false);
    const found = first.find((e) => e.type === 'agent.tool_result' && e.tool_use_id === search.id)!;
    expect(found).toMatchObject({
      is_error: false,
      content: [{ type: 'text', text: 'Forms\nhttps://example.com/forms' }],
    });
    expect(first.filter((e) => e.type === 'session.status_idle').at(-1)!.stop_reason).toEqual({
      type: 'end_turn',
    });
    expect(model.requests).toHaveLength(2);
    // The endpoint reported the search in its usage: the Session counts it and prices it (1 cent).
    const usage = (await ws.get(`/v1/sessions/${sid}`)).body.usage;
    expect(usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
    // 20 input + 10 output tokens at $3/$15 per million round up to 1 cent, plus the search's cent.
    expect(usage.list_cost).toEqual({ amount: '2', currency: 'USD' });

    // …and the next request carries its blocks back exactly as the endpoint sent them.
    expect((await ws.post(`/v1/sessions/${sid}/events`, { events: [say('and again')] })).status).toBe(200);
    await idles(sid, 2);
    const next = model.requests[2]!.body.messages;
    const searchReply = webSearchReply(
      'srvtoolu_1',
      'pdf form rules',
      [{ url: 'https://example.com/forms', title: 'Forms' }],
      'Done.',
    );
    expect(next.at(-2)).toEqual({
      role: 'assistant',
      content: 'content' in searchReply ? searchReply.content : [],
    });
    expect(next.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'and again' }] });
    // Calls Mango or the endpoint answered take no answer from a client.
    for (const call of [activation, search]) {
      const late = await ws.post(`/v1/sessions/${sid}/events`, {
        events: [{ type: 'user.tool_confirmation', tool_use_id: call.id, result: 'allow' }],
      });
      expect(late.status).toBe(400);
      expect(late.body.error.message).toBe(
        `${call.id} was run by Mango or the model endpoint; it takes no user.tool_confirmation`,
      );
    }
  }, 240_000);

  it("a roster Agent's Skills: its delegate Thread lists them under skills/.agents/<agent_id>/ and activates them", async () => {
    const skillId = await uploadSkill([
      ['pdf-tools/SKILL.md', SKILL_MD],
      ['pdf-tools/forms.md', 'Form rules: sign last.\n'],
    ]);
    const fillerRes = await ws.post('/v1/agents', {
      name: 'filler',
      model: 'claude-sonnet-4-6',
      system: 'You fill forms.',
      tools: [{ type: 'agent_toolset_20260401' }],
      skills: [{ type: 'custom', skill_id: skillId }],
    });
    expect(fillerRes.body).toMatchObject({ id: expect.stringMatching(/^agent_/) });
    const filler = fillerRes.body.id as string;
    const bossRes = await ws.post('/v1/agents', {
      name: 'boss',
      model: 'claude-sonnet-4-6',
      system: 'You delegate forms.',
      multiagent: { type: 'coordinator', agents: [filler] },
    });
    expect(bossRes.body).toMatchObject({ id: expect.stringMatching(/^agent_/) });
    const boss = bossRes.body.id as string;
    const seen = model.requests.length;
    // Answered by system prompt (the coordinator and its delegate run concurrently).
    const route = (body: any) => {
      const system = String(body.system ?? '');
      const last = body.messages.at(-1);
      const result = Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
      if (system.startsWith('You delegate forms.')) {
        if (result) return { content: [{ type: 'text', text: 'Sent.' }] };
        if (JSON.stringify(body.messages).includes('message from='))
          return { content: [{ type: 'text', text: 'Done.' }] };
        return {
          content: [
            {
              type: 'tool_use',
              id: 'toolu_boss',
              name: 'send_to_agent',
              input: { agent: 'filler', message: 'Fill the form.' },
            },
          ],
          stop_reason: 'tool_use',
        };
      }
      if (result) return { content: [{ type: 'text', text: 'Filled.' }] };
      return {
        content: [
          { type: 'tool_use', id: 'toolu_fill', name: 'activate_skill', input: { name: 'pdf-tools' } },
        ],
        stop_reason: 'tool_use',
      };
    };
    model.script(...Array.from({ length: 5 }, () => route));
    const created = await ws.post('/v1/sessions', {
      agent: boss,
      environment_id: envId,
      initial_events: [say('Get the form filled.')],
    });
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^sesn_/) });
    const s = created.body;
    for (let i = 0; i < 900; i++) {
      if ((await events(s.id)).some((e) => e.type === 'agent.message' && e.content[0].text === 'Done.'))
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const requests = model.requests.slice(seen).map((r) => r.body);
    const delegate = requests.filter((b) => String(b.system).startsWith('You fill forms.'));
    expect(delegate).toHaveLength(2);
    const path = `skills/.agents/${filler}/pdf-tools/`;
    expect(delegate[0].system).toContain(
      `<skill name="pdf-tools" path="${path}">\nFill and merge PDF forms.\n</skill>`,
    );
    expect(delegate[0].tools.map((t: { name: string }) => t.name)).toContain('activate_skill');
    // The coordinator has no Skills of its own: its requests list none and offer no activation.
    const lead = requests.find((b) => String(b.system).startsWith('You delegate forms.'))!;
    expect(lead.system).not.toContain('<skill ');
    expect(lead.tools.map((t: { name: string }) => t.name)).not.toContain('activate_skill');
    // The delegate's activation was answered from the pinned version, with the staged path.
    const thread = (await ws.get(`/v1/sessions/${s.id}/threads`)).body.data[1];
    const log = (await ws.get(`/v1/sessions/${s.id}/threads/${thread.id}/events?limit=1000`)).body
      .data as any[];
    const answer = log.find((e) => e.type === 'agent.tool_result')!;
    expect(answer.content[0].text).toContain(
      `<skill name="pdf-tools" path="${path}">\n<file path="SKILL.md">\n${SKILL_MD}\n</file>`,
    );
    expect(answer.content[0].text).toContain('<file path="forms.md">\nForm rules: sign last.\n');
  });

  it('an endpoint that rejects the web tools: a session.error naming them and how to disable them', async () => {
    model.script((body) =>
      (body.tools ?? []).some((t: { type?: string }) => t.type)
        ? { status: 400, error: 'tools.0: unknown tool type web_search_20250305' }
        : { content: [{ type: 'text', text: 'unexpected' }] },
    );
    const agent = await ws.post('/v1/agents', {
      name: 'web',
      model: 'claude-sonnet-4-6',
      tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', enabled: false }] }],
    });
    const s = await ws.post('/v1/sessions', {
      agent: agent.body.id,
      environment_id: envId,
      initial_events: [say('search')],
    });
    const list = await idles(s.body.id, 1);
    expect(list.find((e) => e.type === 'session.error')).toMatchObject({
      error: {
        type: 'model_request_failed_error',
        retry_status: { type: 'exhausted' },
        message:
          'The model endpoint answered 400. The request declared web_search as server tools (type web_search_20250305); an endpoint without them rejects it: use an endpoint that runs them, or disable them on the Agent (agent_toolset_20260401 configs: {name: "web_search", enabled: false}).',
      },
    });
  }, 120_000);

  it('a Skill set whose listing cannot fit is refused at Session create with a 400, and nothing is created', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 17; i++)
      ids.push(
        await uploadSkill([
          [`s${i}/SKILL.md`, `---\nname: skill-${i}\ndescription: ${'d'.repeat(1000)}\n---\nbody\n`],
        ]),
      );
    const agent = await ws.post('/v1/agents', {
      name: 'many',
      model: 'claude-sonnet-4-6',
      tools: [{ type: 'agent_toolset_20260401' }],
      skills: ids.map((skill_id) => ({ type: 'custom', skill_id })),
    });
    expect(agent.status).toBe(201);
    const before = (await ws.get('/v1/sessions?limit=100')).body.data.length;
    const refused = await ws.post('/v1/sessions', { agent: agent.body.id, environment_id: envId });
    expect(refused.status).toBe(400);
    expect(refused.body.error.type).toBe('invalid_request_error');
    expect(refused.body.error.message).toMatch(
      /^agent\.skills: the Agent's Skills need \d+ characters in the system prompt; at most 16384 fit \(use fewer Skills or shorter descriptions\)$/,
    );
    expect((await ws.get('/v1/sessions?limit=100')).body.data.length).toBe(before);
    // Fewer Skills fit.
    const fewer = await ws.post('/v1/agents', {
      name: 'fewer',
      model: 'claude-sonnet-4-6',
      tools: [{ type: 'agent_toolset_20260401' }],
      skills: ids.slice(0, 14).map((skill_id) => ({ type: 'custom', skill_id })),
    });
    expect((await ws.post('/v1/sessions', { agent: fewer.body.id, environment_id: envId })).status).toBe(201);
  }, 240_000);
});
