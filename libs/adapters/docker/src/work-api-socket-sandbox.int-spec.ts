import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { DESYNC_PAYLOADS, legitimateRequests, rawRequest } from './desync-corpus.fixtures';
import { createDockerClient } from './docker-engine';
import { parseResponses } from './raw-http-client.fixtures';
import { RecordingUpstream } from './recording-upstream.fixtures';
import { openWorkApiSocket, SANDBOX_SOCKET_DIR, type WorkApiSocket } from './work-api-socket';

/**
 * The attacker's side, played from a real container (issue #34): a sealed container (`NetworkMode: none`)
 * with its Work API socket bind-mounted writes the whole desynchronisation corpus raw onto the socket with
 * a small node script, while a second container served by the same process (its own socket) keeps making
 * legitimate keep-alive requests. Behind both sockets a recording upstream shows what Mango would receive.
 */

/** Inside the attacker: each payload on a fresh connection, everything it gets back until the close. */
const ATTACKER = `
const net = require('net');
const items = JSON.parse(Buffer.from(process.argv[1], 'base64').toString('utf8'));
const send = (raw) => new Promise((resolve) => {
  const c = net.connect('/run/mango/api.sock');
  const got = [];
  const guard = setTimeout(() => { c.destroy(); resolve({ closed: false, got }); }, 20000);
  c.on('connect', () => c.write(Buffer.from(raw, 'latin1')));
  c.on('data', (d) => got.push(d));
  c.on('error', () => {});
  c.on('close', () => { clearTimeout(guard); resolve({ closed: true, got }); });
});
(async () => {
  const out = [];
  for (const it of items) {
    const r = await send(it.raw);
    out.push({ name: it.name, closed: r.closed, got: Buffer.concat(r.got).toString('base64') });
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

/**
 * Inside the bystander: rounds of legitimate requests over a keep-alive agent (as the runner's), each
 * answer checked against what this container sent, until an answer says the attacker is done.
 */
const BYSTANDER = `
const http = require('http');
const templates = JSON.parse(Buffer.from(process.argv[1], 'base64').toString('utf8'));
const agent = new http.Agent({ keepAlive: true, maxSockets: 3 });
const call = (method, path, body, tag) => new Promise((resolve, reject) => {
  const headers = { host: 'mango.sandbox', authorization: 'Bearer wrk_bystander', 'x-tag': tag };
  if (method === 'POST') Object.assign(headers, { 'content-type': 'application/json', 'content-length': body.length });
  const q = http.request({ agent, socketPath: '/run/mango/api.sock', method, path, headers }, (res) => {
    const cs = [];
    res.on('data', (d) => cs.push(d));
    res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(cs).toString('utf8') }));
  });
  q.on('error', reject);
  q.end(method === 'POST' ? body : undefined);
});
(async () => {
  const sent = [], wrong = [];
  let done = false, rounds = 0;
  for (; !done || rounds < 3; rounds++) {
    await Promise.all(templates.map(async (t, i) => {
      const path = t.path + (t.path.includes('?') ? '&' : '?') + 'round=' + rounds;
      const body = Buffer.from(t.body, 'utf8');
      const tag = 'bystander-' + rounds + '-' + i;
      sent.push({ method: t.method, url: path, body: body.toString('latin1') });
      const r = await call(t.method, path, body, tag);
      let echo = {};
      try { echo = JSON.parse(r.text); } catch {}
      if (echo.done) done = true;
      const mine = r.status === 200 && echo.method === t.method && echo.url === path && echo.tag === tag &&
        Buffer.from(echo.body, 'latin1').equals(body);
      if (!mine) wrong.push({ sent: path, status: r.status, got: r.text.slice(0, 300) });
    }));
  }
  agent.destroy();
  process.stdout.write(JSON.stringify({ rounds, sent, wrong }));
})().catch((e) => { process.stdout.write(JSON.stringify({ error: String(e) })); });
`;

describe('the Work API socket against a hostile sandbox (real containers, NetworkMode none)', () => {
  // No request bound: an exec's output stream lasts as long as its script.
  const docker = createDockerClient(process.env.DOCKER_HOST, { timeoutMs: 0 });
  const containers: Docker.Container[] = [];
  const sockets: WorkApiSocket[] = [];
  let root: string;
  let upstream: RecordingUpstream;

  async function sandbox(workId: string): Promise<Docker.Container> {
    const socket = await openWorkApiSocket({ root, workId, upstream: upstream.url });
    sockets.push(socket);
    const c = await docker.createContainer({
      name: `mango-socket-attack-${workId}-${process.pid}`,
      Image: process.env.MANGO_BASE_IMAGE!,
      Entrypoint: ['sleep'],
      Cmd: ['600'],
      User: '1000:1000',
      HostConfig: { NetworkMode: 'none', Binds: [`${socket.dir}:${SANDBOX_SOCKET_DIR}:ro`] },
    });
    containers.push(c);
    await c.start();
    return c;
  }

  /** `node -e script <arg>` in the container; its stdout as JSON. */
  async function node<T>(c: Docker.Container, script: string, arg: unknown): Promise<T> {
    const exec = await c.exec({
      Cmd: ['node', '-e', script, Buffer.from(JSON.stringify(arg)).toString('base64')],
      AttachStdout: true,
      AttachStderr: true,
    });
    const stream = await exec.start({});
    const out = new PassThrough();
    const err = new PassThrough();
    const chunks: Buffer[] = [];
    const errors: Buffer[] = [];
    out.on('data', (b: Buffer) => chunks.push(b));
    err.on('data', (b: Buffer) => errors.push(b));
    docker.modem.demuxStream(stream, out, err);
    // The end of the exec's output (dockerd may reset the hijacked connection rather than end it).
    await new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
    });
    const { ExitCode } = await exec.inspect();
    if (ExitCode !== 0)
      throw new Error(`exit ${ExitCode}; stderr: ${Buffer.concat(errors).toString('utf8')}`);
    const text = Buffer.concat(chunks).toString('utf8');
    if (!text) throw new Error(`no output; stderr: ${Buffer.concat(errors).toString('utf8')}`);
    return JSON.parse(text) as T;
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'mango-socket-attack-'));
    upstream = await new RecordingUpstream().start();
  });

  afterAll(async () => {
    for (const c of containers) await c.remove({ force: true }).catch(() => undefined);
    for (const s of sockets) await s.close();
    await upstream?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('the corpus from one container reaches nothing; the other container is answered its own data throughout', async () => {
    const attacker = await sandbox('work_attacker');
    const bystander = await sandbox('work_bystander');
    const fromBystander = node<{
      rounds: number;
      sent: Array<{ method: string; url: string; body: string }>;
      wrong: unknown[];
      error?: string;
    }>(bystander, BYSTANDER, legitimateRequests('bystander'));
    // The bystander is running before the first payload, and keeps running until the attacker is done.
    await upstream.until(() =>
      upstream.requests.some((r) => String(r.headers['x-tag']).startsWith('bystander-')),
    );

    const controls = legitimateRequests('attacker').map((r, i) => ({
      name: `control-${i}`,
      raw: rawRequest(r, 'wrk_attacker'),
      expected: { method: r.method, url: r.path, body: Buffer.from(r.body, 'utf8').toString('latin1') },
    }));
    const results = await node<Array<{ name: string; closed: boolean; got: string }>>(attacker, ATTACKER, [
      ...DESYNC_PAYLOADS.map((p) => ({ name: p.name, raw: p.raw })),
      ...controls,
    ]);
    upstream.note = { done: true };
    const bystanderSaw = await fromBystander;

    // Upstream: exactly the legitimate requests of both, each with exactly the bytes its client declared.
    const key = (r: { method: string; url: string; body: string }) => `${r.method} ${r.url} ${r.body}`;
    const missing = [...controls.map((c) => c.expected), ...bystanderSaw.sent].map(key);
    const extra: string[] = [];
    for (const k of upstream.requests.map(key)) {
      const at = missing.indexOf(k);
      if (at < 0) extra.push(k.slice(0, 200));
      else missing.splice(at, 1);
    }
    expect({ extra, missing }).toEqual({ extra: [], missing: [] });
    // Every payload: one answer, refused locally with its status, then the connection closed.
    const answers = new Map(results.map((r) => [r.name, parseResponses(Buffer.from(r.got, 'base64'))]));
    expect(results.filter((r) => !r.closed).map((r) => r.name)).toEqual([]);
    expect(DESYNC_PAYLOADS.map((p) => [p.name, answers.get(p.name)!.map((a) => a.status)])).toEqual(
      DESYNC_PAYLOADS.map((p) => [p.name, [p.status]]),
    );
    // The attacker's own legitimate requests are answered with their own echo.
    expect(controls.map((c) => answers.get(c.name)!.map((a) => [a.status, JSON.parse(a.body)]))).toEqual(
      controls.map((c) => [[200, expect.objectContaining(c.expected)]]),
    );

    // The bystander: several rounds, every answer its own.
    expect(bystanderSaw.error).toBeUndefined();
    expect(bystanderSaw.wrong).toEqual([]);
    expect(bystanderSaw.rounds).toBeGreaterThanOrEqual(3);

    // And never on a shared connection.
    const attackerKeys = new Set(controls.map((c) => key(c.expected)));
    const conns = (mine: boolean) =>
      new Set(upstream.requests.filter((r) => attackerKeys.has(key(r)) === mine).map((r) => r.connection));
    expect([...conns(true)].filter((c) => conns(false).has(c))).toEqual([]);
  });
});
