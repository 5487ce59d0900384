import { APIUserAbortError } from '@anthropic-ai/sdk';
import { startScriptedModel, ScriptedModelServer } from '@mango/testing';
import { ModelClient, ModelRequestError } from './model-client';

/**
 * The model request's bounds against the scripted Messages API server (real HTTP on 127.0.0.1, streaming):
 * a stalled stream, a reply that never finishes and one too large each fail the request with a retryable
 * error and close the connection; the caller's cancellation aborts it (not retryable: an interrupt).
 */
describe('ModelClient bounds (scripted Messages API server on loopback)', () => {
  let model: ScriptedModelServer;
  beforeAll(async () => {
    model = await startScriptedModel();
  });
  afterAll(() => model.close());

  const request = { model: 'm', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };
  let abandoned = 0;

  it('a reply within the bounds streams through whole', async () => {
    model.script({ content: [{ type: 'text', text: 'hello there' }], chunkChars: 3 });
    const client = new ModelClient({ baseUrl: model.url, apiKey: 'k', idleTimeoutMs: 5000 });
    const r = await client.createMessage(request);
    expect(r.content).toEqual([{ type: 'text', text: 'hello there' }]);
  });

  it('a stream that stalls mid-reply fails at the idle bound with a retryable error, and the connection is closed', async () => {
    model.script({
      content: [{ type: 'text', text: 'one two three four' }],
      chunkChars: 4,
      stallAfterChunks: 2,
    });
    const client = new ModelClient({ baseUrl: model.url, apiKey: 'k', idleTimeoutMs: 300 });
    const seen: string[] = [];
    const err = await client
      .createMessage(request, { onText: (_i, t) => seen.push(t) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelRequestError);
    expect(err).toMatchObject({ retryable: true, status: null });
    expect((err as Error).message).toMatch(/nothing received for 300 ms/);
    expect(seen.join('')).toBe('one two ');
    await model.untilAbandoned(++abandoned);
  });

  it('a reply that keeps trickling fails at the overall deadline (which covers the body), retryably', async () => {
    model.script({ content: [{ type: 'text', text: 'x'.repeat(10_000) }], chunkChars: 1, chunkDelayMs: 20 });
    const client = new ModelClient({ baseUrl: model.url, apiKey: 'k', timeoutMs: 1000, idleTimeoutMs: 5000 });
    const err = await client.createMessage(request).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true });
    expect((err as Error).message).toMatch(/no complete answer within 1000 ms/);
    await model.untilAbandoned(++abandoned);
  });

  it('a reply larger than the cap is cut while it streams in, retryably', async () => {
    // 400 KB of deltas, then silence: the reply never ends by itself, so only the cap can end it.
    model.script({
      content: [{ type: 'text', text: 'y'.repeat(800_000) }],
      chunkChars: 4096,
      stallAfterChunks: 100,
    });
    const client = new ModelClient({ baseUrl: model.url, apiKey: 'k', maxResponseBytes: 65_536 });
    const err = await client.createMessage(request).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true });
    expect((err as Error).message).toMatch(/larger than the 65536-byte cap/);
    await model.untilAbandoned(++abandoned);
  });

  it('the caller’s cancellation aborts the request mid-stream (an interrupt, not a model error)', async () => {
    model.script({ content: [{ type: 'text', text: 'a b c d e f' }], chunkChars: 2, stallAfterChunks: 1 });
    const client = new ModelClient({ baseUrl: model.url, apiKey: 'k' });
    const cancel = new AbortController();
    const err = await client
      .createMessage(request, { signal: cancel.signal, onText: () => cancel.abort() })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIUserAbortError);
    await model.untilAbandoned(++abandoned);
  });
});
