// The TypeScript conformance program: the packed @mango/sdk (npm tarball) against a real deployment
// (tools/sdk/test/conformance.e2e-spec.ts starts it and compiles this file against the installed package).
import { MangoClient, NotFoundError } from '@mango/sdk';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};
function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`conformance: ${what}`);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Ev = { id: string; type: string; [k: string]: any };

async function main(): Promise<void> {
  const mango = new MangoClient({ baseUrl: env('MANGO_BASE_URL'), apiKey: env('MANGO_API_KEY') });
  const lang = 'typescript';

  // An Agent with a custom tool, and a Session with a budget of 1 cent.
  const agent = await mango.agents.create({
    name: `conformance-${lang}`,
    model: 'claude-sonnet-4-6',
    tools: [
      { type: 'custom', name: 'lookup', description: 'Look a thing up', input_schema: { type: 'object' } },
    ],
  } as never);
  const session = await mango.sessions.create({
    agent: agent.id,
    environment_id: env('MANGO_ENVIRONMENT_ID'),
    budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } },
    initial_events: [{ type: 'user.message', content: [{ type: 'text', text: `conformance ${lang}` }] }],
  } as never);
  check(session.budget?.max_list_cost.amount === '1', 'the Session carries its budget');

  // Stream from the start, stop after two events, resume with Last-Event-ID until the turn is idle.
  const streamed: Ev[] = [];
  let resumeId = '';
  for await (const { id, event } of mango.sessions.events.stream(session.id)) {
    streamed.push(event as Ev);
    resumeId = id;
    if (streamed.length === 2) break;
  }
  let lastSeen = '';
  for await (const { id, event } of mango.sessions.events.stream(session.id, { lastEventId: resumeId })) {
    lastSeen = id;
    streamed.push(event as Ev);
    if ((event as Ev).type === 'session.status_idle') break;
  }
  check(lastSeen !== '', 'the resumed stream yields events');
  const idle = streamed.at(-1)!;
  check(
    idle.stop_reason?.type === 'requires_action',
    `first turn ends requires_action, got ${JSON.stringify(idle.stop_reason)}`,
  );

  // Paging: the history page by page equals the streamed events, with no gap and no duplicate.
  const paged: Ev[] = [];
  for await (const e of mango.sessions.events.list(session.id, { limit: 2 })) paged.push(e as Ev);
  check(
    JSON.stringify(paged.map((e) => e.id)) === JSON.stringify(streamed.map((e) => e.id)),
    'paged == streamed (resume has no gap or duplicate)',
  );

  // Usage and list cost in the Session: 2,000 + 400 tokens at $3/$15 per million → 2 cents.
  const priced = await mango.sessions.retrieve(session.id);
  const usage = priced.usage as Record<string, any>;
  check(usage.input_tokens === 2000 && usage.output_tokens === 400, `usage tokens ${JSON.stringify(usage)}`);
  check(
    usage.list_cost?.amount === '2' && usage.list_cost?.currency === 'USD',
    `list_cost ${JSON.stringify(usage.list_cost)}`,
  );

  // Settling the tool call hits the budget: a session.usage event carries usage, list_cost and budget.
  const use = paged.find((e) => e.type === 'agent.custom_tool_use');
  check(use, 'an agent.custom_tool_use');
  await mango.sessions.events.send(session.id, {
    events: [
      {
        type: 'user.custom_tool_result',
        custom_tool_use_id: use.id,
        content: [{ type: 'text', text: '42' }],
      },
    ],
  } as never);
  let after: Ev[] = [];
  for (let i = 0; i < 300; i++) {
    after = [];
    for await (const e of mango.sessions.events.list(session.id, { limit: 100 })) after.push(e as Ev);
    if (after.filter((e) => e.type === 'session.status_idle').length >= 2) break;
    await sleep(200);
  }
  const gate = after.find((e) => e.type === 'session.usage');
  check(gate, 'a session.usage event');
  check(
    gate.usage?.list_cost?.amount === '2' && gate.budget?.max_list_cost?.amount === '1',
    `session.usage ${JSON.stringify(gate)}`,
  );
  check(after.at(-1)!.stop_reason?.type === 'budget_reached', 'the turn stops with budget_reached');

  // Files: upload ≥ 5 MiB of binary, find it by paging, download byte-identical, delete.
  const bytes = new Uint8Array(5 * 1024 * 1024 + 12345);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 11)) & 0xff;
  const file = await mango.files.upload({
    file: { data: bytes, filename: `conformance-${lang}.bin`, contentType: 'application/octet-stream' },
  });
  check(
    file.size_bytes === bytes.length && file.filename === `conformance-${lang}.bin`,
    `uploaded ${JSON.stringify(file)}`,
  );
  let found = false;
  for await (const f of mango.files.list({ limit: 1 })) if (f.id === file.id) found = true;
  check(found, 'the File is listed');
  const content = await mango.files.content(file.id);
  const got = new Uint8Array(await content.arrayBuffer());
  check(got.length === bytes.length && got.every((b, i) => b === bytes[i]), 'download is byte-identical');
  const deleted = await mango.files.delete(file.id);
  check(deleted.id === file.id, 'deleted');
  try {
    await mango.files.retrieve(file.id);
    check(false, 'a deleted File is gone');
  } catch (err) {
    check(
      err instanceof NotFoundError && !!err.requestId,
      `404 NotFoundError with a request id, got ${String(err)}`,
    );
  }
  console.log(`CONFORMANCE OK ${lang}`);
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
