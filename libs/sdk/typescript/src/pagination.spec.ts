import { MangoClient } from './client';
import { NotFoundError } from './errors';
import { agentFixture, workFixture } from './testing/fixtures';
import { errorEnvelope, json, TestServer } from './testing/test-server';
import type { Agent, Page } from './types';

const ids = (prefix: string, from: number, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}_${String(from + i).padStart(2, '0')}`);

describe('auto-paging', () => {
  let server: TestServer;
  let client: MangoClient;

  beforeEach(async () => {
    server = await TestServer.start();
    client = new MangoClient({ baseUrl: server.baseUrl, apiKey: 'mango_ak_x', maxRetries: 0 });
  });

  afterEach(async () => {
    await server.close();
  });

  const threePages = (): void => {
    server.script(
      json(200, { data: ids('agent', 1, 2).map((id) => agentFixture(id)), next_page: 'cursor_2' }),
      json(200, { data: ids('agent', 3, 2).map((id) => agentFixture(id)), next_page: 'cursor_3' }),
      json(200, { data: ids('agent', 5, 1).map((id) => agentFixture(id)), next_page: null }),
    );
  };

  it('awaiting a list resolves to the first page only', async () => {
    threePages();
    const page: Page<Agent> = await client.agents.list({ limit: 2 });
    expect(page.data.map((a) => a.id)).toEqual(['agent_01', 'agent_02']);
    expect(page.next_page).toBe('cursor_2');
    expect(server.requests).toHaveLength(1);
  });

  it('for await walks every item across 3 pages, passing next_page back as page with the same filters', async () => {
    threePages();
    const seen: string[] = [];
    for await (const agent of client.agents.list({ limit: 2, include_archived: true })) seen.push(agent.id);
    expect(seen).toEqual(ids('agent', 1, 5));
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/agents?limit=2&include_archived=true',
      '/v1/agents?limit=2&include_archived=true&page=cursor_2',
      '/v1/agents?limit=2&include_archived=true&page=cursor_3',
    ]);
  });

  it('iterPages yields each page in order', async () => {
    threePages();
    const pages: Array<Page<Agent>> = [];
    for await (const page of client.agents.list({ limit: 2 }).iterPages()) pages.push(page);
    expect(pages.map((p) => p.data.length)).toEqual([2, 2, 1]);
    expect(pages.map((p) => p.next_page)).toEqual(['cursor_2', 'cursor_3', null]);
  });

  it('reuses the awaited first page when the same PagePromise is iterated afterwards', async () => {
    threePages();
    const list = client.agents.list({ limit: 2 });
    await list;
    const seen: string[] = [];
    for await (const agent of list) seen.push(agent.id);
    expect(seen).toHaveLength(5);
    expect(server.requests).toHaveLength(3);
  });

  it('sends nothing until the list is awaited or iterated', async () => {
    server.script(json(200, { data: [], next_page: null }));
    const list = client.agents.list();
    await new Promise((r) => setTimeout(r, 50));
    expect(server.requests).toHaveLength(0);
    await expect(list).resolves.toEqual({ data: [], next_page: null });
    expect(server.requests).toHaveLength(1);
  });

  it('starts from a caller-given page cursor', async () => {
    server.script(json(200, { data: [agentFixture('agent_09')], next_page: null }));
    const seen: string[] = [];
    for await (const agent of client.agents.list({ page: 'cursor_9' })) seen.push(agent.id);
    expect(seen).toEqual(['agent_09']);
    expect(server.lastRequest.url).toBe('/v1/agents?page=cursor_9');
  });

  it('stops early when the loop breaks', async () => {
    threePages();
    for await (const agent of client.agents.list({ limit: 2 })) {
      if (agent.id === 'agent_02') break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it('propagates an error from a later page', async () => {
    server.script(
      json(200, { data: [agentFixture('agent_01')], next_page: 'cursor_2' }),
      errorEnvelope(404, 'not_found_error', 'gone'),
    );
    const seen: string[] = [];
    const iterate = async (): Promise<void> => {
      for await (const agent of client.agents.list()) seen.push(agent.id);
    };
    await expect(iterate()).rejects.toBeInstanceOf(NotFoundError);
    expect(seen).toEqual(['agent_01']);
  });

  it('pages agent versions, environments and Work the same way', async () => {
    server.script(
      json(200, { data: [agentFixture('agent_1', { version: 2 })], next_page: 'v_2' }),
      json(200, { data: [agentFixture('agent_1', { version: 1 })], next_page: null }),
      json(200, { data: [], next_page: 'e_2' }),
      json(200, { data: [], next_page: null }),
      json(200, { data: [workFixture('work_1')], next_page: 'w_2' }),
      json(200, { data: [workFixture('work_2')], next_page: null }),
    );
    const versions: number[] = [];
    for await (const v of client.agents.versions.list('agent_1', { limit: 1 })) versions.push(v.version);
    let environments = 0;
    for await (const _env of client.environments.list()) environments += 1;
    const work: string[] = [];
    for await (const w of client.environments.work.list('env_1')) work.push(w.id);
    expect(versions).toEqual([2, 1]);
    expect(environments).toBe(0);
    expect(work).toEqual(['work_1', 'work_2']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/agents/agent_1/versions?limit=1',
      '/v1/agents/agent_1/versions?limit=1&page=v_2',
      '/v1/environments',
      '/v1/environments?page=e_2',
      '/v1/environments/env_1/work',
      '/v1/environments/env_1/work?page=w_2',
    ]);
  });
});
