import { createServer, IncomingMessage, Server } from 'node:http';

/**
 * The one test double for the external paid model API: a real HTTP server on 127.0.0.1 that speaks the
 * Messages API (`POST /v1/messages`) and answers from a per-test script, recording every request.
 */
export type ScriptedReply =
  | {
      content: Array<Record<string, unknown>>;
      stop_reason?: string;
      usage?: { input_tokens: number; output_tokens: number };
      /** Answer only after this long (to crash a caller mid-request). */
      delayMs?: number;
    }
  | { status: number; error: string };

export interface ScriptedModelServer {
  url: string;
  requests: Array<{ headers: IncomingMessage['headers']; body: any }>;
  /** Replies are consumed in order; a function sees the request body. */
  script(...replies: Array<ScriptedReply | ((body: any) => ScriptedReply)>): void;
  close(): Promise<void>;
}

export async function startScriptedModel(): Promise<ScriptedModelServer> {
  const queue: Array<ScriptedReply | ((body: any) => ScriptedReply)> = [];
  const requests: ScriptedModelServer['requests'] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += String(d)));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw || '{}');
      requests.push({ headers: req.headers, body });
      const next = queue.shift();
      const reply =
        typeof next === 'function' ? next(body) : (next ?? { status: 500, error: 'script exhausted' });
      if ('status' in reply) {
        res
          .writeHead(reply.status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: reply.error } }));
        return;
      }
      const send = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `msg_${++n}`,
            type: 'message',
            role: 'assistant',
            model: body.model,
            content: reply.content,
            stop_reason: reply.stop_reason ?? 'end_turn',
            usage: reply.usage ?? { input_tokens: 10, output_tokens: 5 },
          }),
        );
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...replies) => queue.push(...replies),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
