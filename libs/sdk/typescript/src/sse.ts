import type { OpenStream } from './core';

/** One dispatched Server-Sent Events frame. */
export interface SseFrame {
  /** The `id:` field of this frame, if it had one (not carried over from earlier frames). */
  id: string | undefined;
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/**
 * Incremental `text/event-stream` parser: feed decoded text with {@link push}, get complete frames.
 * Lines end with CRLF, LF or CR; a blank line dispatches a frame; `:` lines are comments; one space
 * after the field's colon is dropped; frames without `data:` are not dispatched; `retry:` and unknown
 * fields are ignored.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;

  push(text: string): SseFrame[] {
    this.buffer += text;
    const frames: SseFrame[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== '\n' && ch !== '\r') continue;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (ch === '\r' && i === this.buffer.length - 1) break;
      const frame = this.line(this.buffer.slice(start, i));
      if (frame) frames.push(frame);
      if (ch === '\r' && this.buffer[i + 1] === '\n') i++;
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return frames;
  }

  private line(line: string): SseFrame | undefined {
    if (line === '') {
      const frame =
        this.data.length === 0
          ? undefined
          : { id: this.id, event: this.event === '' ? 'message' : this.event, data: this.data.join('\n') };
      this.data = [];
      this.event = '';
      this.id = undefined;
      return frame;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    return undefined;
  }
}

/** Reads an open stream frame by frame, restarting its idle timer on every chunk. */
export async function* readSse(stream: OpenStream): AsyncGenerator<SseFrame, void, undefined> {
  const reader = stream.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      stream.touch();
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    // An unterminated final frame is discarded, as the SSE spec requires.
    parser.push(decoder.decode());
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
