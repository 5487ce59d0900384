import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * The one test double for the external paid model API: a real HTTP server on 127.0.0.1 that speaks the
 * Messages API (`POST /v1/messages`) and answers from a per-test script, recording every request.
 */
export type ScriptedReply =
  | {
      content: Array<Record<string, unknown>>;
      stop_reason?: string;
      usage?: {
        input_tokens: number;
        output_tokens: number;
        /** Server tools the endpoint ran (`web_search_requests`, `web_fetch_requests`). */
        server_tool_use?: Record<string, number>;
      };
      /** Answer only after this long (to crash a caller mid-request). */
      delayMs?: number;
      /** Streaming requests: text is sent in deltas of this many characters (default: one delta per block)… */
      chunkChars?: number;
      /** …with this pause between deltas. */
      chunkDelayMs?: number;
      /** Streaming requests: after this many text deltas the stream goes silent (never ends). */
      stallAfterChunks?: number;
    }
  | { status: number; error: string; /** Answer only after this long. */ delayMs?: number };

export interface ScriptedModelServer {
  url: string;
  requests: Array<{ headers: IncomingMessage['headers']; body: any }>;
  /** Replies are consumed in order; a function sees the request body. */
  script(...replies: Array<ScriptedReply | ((body: any) => ScriptedReply)>): void;
  /** Resolves once `n` answers in all were closed by the client before they ended. */
  untilAbandoned(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startScriptedModel(): Promise<ScriptedModelServer> {
  const queue: Array<ScriptedReply | ((body: any) => ScriptedReply)> = [];
  const requests: ScriptedModelServer['requests'] = [];
  let n = 0;
  let abandoned = 0;
  const abandonWaiters: Array<{ n: number; resolve: () => void }> = [];
  const server: Server = createServer((req, res) => {
    res.on('close', () => {
      if (res.writableEnded) return;
      abandoned++;
      for (const w of abandonWaiters.filter((x) => x.n <= abandoned)) {
        abandonWaiters.splice(abandonWaiters.indexOf(w), 1);
        w.resolve();
      }
    });
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
        const fail = () =>
          res
            .writeHead(reply.status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: reply.error } }));
        if (reply.delayMs) setTimeout(fail, reply.delayMs).unref();
        else fail();
        return;
      }
      const message = {
        id: `msg_${++n}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: reply.content,
        stop_reason: reply.stop_reason ?? 'end_turn',
        stop_sequence: null,
        usage: reply.usage ?? { input_tokens: 10, output_tokens: 5 },
      };
      const send = () => {
        if (body.stream === true) void streamReply(res, message, reply);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
      };
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
    untilAbandoned: (count) =>
      abandoned >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => abandonWaiters.push({ n: count, resolve })),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The Messages API streaming wire format (message_start … message_stop) for one scripted reply. */
async function streamReply(
  res: ServerResponse,
  message: {
    content: Array<Record<string, unknown>>;
    stop_reason: string;
    usage: { input_tokens: number; output_tokens: number; server_tool_use?: Record<string, number> };
  } & Record<string, unknown>,
  reply: { chunkChars?: number; chunkDelayMs?: number; stallAfterChunks?: number },
): Promise<void> {
  let deltas = 0;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const pause = () =>
    reply.chunkDelayMs ? new Promise((r) => setTimeout(r, reply.chunkDelayMs)) : Promise.resolve();
  send('message_start', {
    message: {
      ...message,
      content: [],
      stop_reason: null,
      usage: { input_tokens: message.usage.input_tokens, output_tokens: 0 },
    },
  });
  for (const [index, block] of message.content.entries()) {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      const text = String(block.text ?? '');
      const size = reply.chunkChars ?? Math.max(text.length, 1);
      for (let at = 0; at < text.length; at += size) {
        if (reply.stallAfterChunks !== undefined && deltas >= reply.stallAfterChunks) return; // silent, open
        send('content_block_delta', {
          index,
          delta: { type: 'text_delta', text: text.slice(at, at + size) },
        });
        deltas++;
        if (res.destroyed) return;
        await pause();
      }
    } else if (block.type === 'thinking') {
      // Extended thinking as the Messages API streams it: the text, then its signature.
      send('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'thinking_delta', thinking: String(block.thinking ?? '') },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'signature_delta', signature: String(block.signature ?? '') },
      });
    } else if (block.type === 'redacted_thinking') {
      send('content_block_start', { index, content_block: { type: 'redacted_thinking', data: block.data } });
    } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      // server_tool_use: a web tool the endpoint "ran" (see webSearchReply), streamed like a tool_use.
      send('content_block_start', {
        index,
        content_block: { type: block.type, id: block.id, name: block.name, input: {} },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) },
      });
    } else {
      // Result blocks of server tools (web_search_tool_result, web_fetch_tool_result) arrive whole.
      send('content_block_start', { index, content_block: block });
    }
    send('content_block_stop', { index });
  }
  send('message_delta', {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    // The final usage: the endpoint reports the server tools it ran here (as the Messages API does).
    usage: {
      output_tokens: message.usage.output_tokens,
      ...(message.usage.server_tool_use ? { server_tool_use: message.usage.server_tool_use } : {}),
    },
  });
  send('message_stop', {});
  res.end();
}

/**
 * A reply in which the endpoint ran its web search server tool: the `server_tool_use` block, its
 * `web_search_tool_result` with these results, then `text` — the blocks the Messages API sends.
 */
export function webSearchReply(
  id: string,
  query: string,
  results: Array<{ url: string; title: string }>,
  text: string,
): ScriptedReply {
  return {
    content: [
      { type: 'server_tool_use', id, name: 'web_search', input: { query } },
      {
        type: 'web_search_tool_result',
        tool_use_id: id,
        content: results.map((r) => ({
          type: 'web_search_result',
          url: r.url,
          title: r.title,
          encrypted_content: Buffer.from(`${r.title} ${r.url}`).toString('base64'),
          page_age: null,
        })),
      },
      { type: 'text', text },
    ],
    usage: { input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 1 } },
  };
}
