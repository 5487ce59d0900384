import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Session } from '@mango/sdk';
import { messageOf, useClient } from '../api';
import { when } from '../hooks';
import {
  answersToolUse,
  ConsoleEvent,
  formatMoney,
  groupByModelRequest,
  isToolUse,
  laneOf,
  lanes,
  liveStatus,
  mergeEvents,
  pendingApprovals,
  PRIMARY,
  textOf,
  ToolCallState,
  toolCallStates,
  TranscriptBlock,
  usageView,
} from '../transcript';

type Stream = 'connecting' | 'live' | 'reconnecting' | 'ended';

/**
 * One Session: a timeline with a lane per Thread, the transcript grouped by model request, tool calls with
 * inputs and results, pending approvals (allow / deny), usage against budget, a message box and an
 * interrupt. History and live events both come from the SSE stream; after a drop it resumes with
 * `Last-Event-ID` (the SDK's reconnect, then ours), so every event is shown once. `#sevt_…` deep-links.
 */
export function SessionPage({ id }: { id: string }) {
  const client = useClient();
  const [session, setSession] = useState<Session | null>(null);
  const [events, setEvents] = useState<ConsoleEvent[]>([]);
  const [stream, setStream] = useState<Stream>('connecting');
  const [error, setError] = useState<string | null>(null);
  const [lane, setLane] = useState<string>(PRIMARY);

  // The Session (title, Agent, cost): read on open and again whenever a turn ends (the server prices usage).
  const [turnsEnded, setTurnsEnded] = useState(0);
  useEffect(() => {
    let live = true;
    client.sessions.retrieve(id).then(
      (s) => live && setSession(s),
      (e) => live && setError(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [client, id, turnsEnded]);

  useEffect(() => {
    const abort = new AbortController();
    let buffer: ConsoleEvent[] = [];
    let flush: ReturnType<typeof setTimeout> | undefined;
    const push = (e: ConsoleEvent) => {
      buffer.push(e);
      // Batches the replayed history into a few renders.
      flush ??= setTimeout(() => {
        const more = buffer;
        buffer = [];
        flush = undefined;
        setEvents((old) => mergeEvents(old, more));
      }, 30);
    };
    // One reconnecting reader per stream: the Session's (its primary Thread's view) and, once a
    // delegate Thread is created, that Thread's own (its replies and tool calls are only there).
    const follow = async (
      open: (lastEventId: string | undefined) => AsyncIterable<{ id?: string; event: unknown }>,
      primaryStream: boolean,
    ) => {
      let lastSeq: string | undefined;
      for (let attempt = 0; !abort.signal.aborted; attempt++) {
        try {
          if (primaryStream) setStream(attempt === 0 ? 'connecting' : 'reconnecting');
          for await (const { id: seq, event } of open(lastSeq)) {
            if (seq) lastSeq = seq;
            attempt = 0;
            if (primaryStream) setStream('live');
            const e = event as unknown as ConsoleEvent;
            push(e);
            if (e.type === 'session.status_idle') setTurnsEnded((n) => n + 1);
            const thread = e.session_thread_id;
            if (e.type === 'session.thread_created' && thread && !followed.has(thread)) {
              followed.add(thread);
              void follow(
                (last) =>
                  client.sessions.threads.stream(id, thread, { lastEventId: last, signal: abort.signal }),
                false,
              );
            }
          }
          if (primaryStream) setStream('ended');
          return;
        } catch (e) {
          if (abort.signal.aborted) return;
          setError(`stream: ${messageOf(e)}`);
          await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** attempt, 10_000)));
        }
      }
    };
    const followed = new Set<string>();
    void follow(
      (last) => client.sessions.events.stream(id, { lastEventId: last, signal: abort.signal }),
      true,
    );
    return () => {
      abort.abort();
      clearTimeout(flush);
    };
  }, [client, id]);

  // Deep link: scroll to and mark #sevt_… once that event is on the page (again on every hash change).
  const [hash, setHash] = useState(() => window.location.hash.slice(1));
  const scrolledTo = useRef('');
  useEffect(() => {
    const onHash = () => setHash(window.location.hash.slice(1));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    if (!hash || scrolledTo.current === hash) return;
    const el = document.getElementById(hash);
    if (el) {
      scrolledTo.current = hash;
      for (const old of document.querySelectorAll('.linked')) old.classList.remove('linked');
      el.classList.add('linked');
      el.scrollIntoView({ block: 'center' });
    }
  }, [events, hash]);

  const primary = session ? `sthr_${session.id.slice('sesn_'.length)}` : undefined;
  const allLanes = useMemo(() => lanes(events, primary), [events, primary]);
  const laneEvents = useMemo(
    () => events.filter((e) => laneOf(e, primary) === lane),
    [events, lane, primary],
  );
  const blocks = useMemo(() => groupByModelRequest(laneEvents), [laneEvents]);
  const tools = useMemo(() => toolCallStates(events), [events]);
  const pending = useMemo(() => pendingApprovals(events), [events]);
  const status = liveStatus(session?.status ?? 'idle', events);
  const usage = usageView(session?.usage as Record<string, unknown>, session?.budget as never, events);

  const send = async (body: Record<string, unknown>) => {
    setError(null);
    try {
      await client.sessions.events.send(id, { events: [body] } as never, { maxRetries: 0 });
      return true;
    } catch (e) {
      setError(messageOf(e));
      return false;
    }
  };

  if (error && !session) return <p class="error">{error}</p>;
  if (!session) return <p>Loading…</p>;
  const agent = session.agent as { id: string; name?: string; version?: number };
  return (
    <section class="session">
      <h1>
        {session.title || session.id}{' '}
        <span class={`status status-${status.replace(' ', '-')}`} data-testid="status">
          {status}
        </span>
      </h1>
      <p class="dim">
        <span class="mono">{session.id}</span> · Agent {agent.name ?? agent.id} v{agent.version} · Environment{' '}
        <span class="mono">{session.environment_id}</span> · stream <span data-testid="stream">{stream}</span>
      </p>
      <Usage usage={usage} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <Timeline events={events} lanes={allLanes} primary={primary} lane={lane} onLane={setLane} />
      {pending.length > 0 && <Approvals pending={pending} send={send} />}
      <div class="transcript" data-testid="transcript">
        {blocks.map((b) => (
          <Block key={b.id} block={b} tools={tools} />
        ))}
      </div>
      <Composer status={status} send={send} lane={lane} />
    </section>
  );
}

function Usage({ usage }: { usage: ReturnType<typeof usageView> }) {
  const pct = usage.fraction === null ? null : Math.min(100, Math.round(usage.fraction * 100));
  return (
    <div class="usage" data-testid="usage">
      <span>
        tokens in {usage.inputTokens} · out {usage.outputTokens}
      </span>
      <span>
        cost {formatMoney(usage.cost)} of {usage.budget ? formatMoney(usage.budget) : 'no budget'}
      </span>
      {pct !== null && (
        <span class="meter" title={`${pct}% of budget`}>
          <span style={{ width: `${pct}%` }} class={pct >= 100 ? 'over' : ''} />
        </span>
      )}
    </div>
  );
}

/** A lane per Thread: one mark per event, linked to it; choosing a lane shows its transcript. */
function Timeline(props: {
  events: ConsoleEvent[];
  lanes: string[];
  primary: string | undefined;
  lane: string;
  onLane: (lane: string) => void;
}) {
  return (
    <div class="timeline" data-testid="timeline">
      {props.lanes.map((l) => (
        <div key={l} class={`lane ${l === props.lane ? 'current' : ''}`}>
          <button type="button" class="lane-name" onClick={() => props.onLane(l)}>
            {l === PRIMARY ? 'primary' : l}
          </button>
          <div class="marks">
            {props.events
              .filter((e) => laneOf(e, props.primary) === l)
              .map((e) => (
                <a
                  key={e.id}
                  href={`#${e.id}`}
                  class={`mark mark-${e.type.split('.')[0]}`}
                  title={`${e.type} ${when(e.processed_at)}`}
                  onClick={() => props.onLane(l)}
                />
              ))}
          </div>
        </div>
      ))}
    </div>
  );
}

function Approvals({
  pending,
  send,
}: {
  pending: ConsoleEvent[];
  send: (b: Record<string, unknown>) => Promise<boolean>;
}) {
  const [reason, setReason] = useState('');
  const answer = (e: ConsoleEvent, result: 'allow' | 'deny') =>
    send({
      type: 'user.tool_confirmation',
      tool_use_id: e.id,
      result,
      ...(result === 'deny' && reason.trim() ? { deny_message: reason.trim() } : {}),
      ...(e.session_thread_id ? { session_thread_id: e.session_thread_id } : {}),
    });
  return (
    <div class="approvals" data-testid="approvals">
      <h2>Awaiting approval</h2>
      {pending.map((e) => (
        <div key={e.id} class="approval" data-tool-use={e.id}>
          <div>
            <strong>{String(e.name)}</strong>
            {e.mcp_server_name ? <span class="dim"> on {String(e.mcp_server_name)}</span> : null}
            {e.session_thread_id ? <span class="dim"> (thread {e.session_thread_id})</span> : null}
          </div>
          <pre>{JSON.stringify(e.input ?? {}, null, 2)}</pre>
          <button type="button" class="allow" onClick={() => answer(e, 'allow')}>
            Allow
          </button>
          <button type="button" class="deny" onClick={() => answer(e, 'deny')}>
            Deny
          </button>
        </div>
      ))}
      <input
        class="deny-reason"
        placeholder="Reason shown to the model when denying (optional)"
        value={reason}
        onInput={(ev) => setReason((ev.target as HTMLInputElement).value)}
      />
    </div>
  );
}

function Block({ block, tools }: { block: TranscriptBlock; tools: Map<string, ToolCallState> }) {
  if (block.kind === 'event') return <EventRow event={block.event} tools={tools} />;
  const usage = block.end?.model_usage as Record<string, number> | null | undefined;
  return (
    <div class="model-request" id={block.id} data-testid="model-request">
      <div class="model-request-head dim">
        model request · {when(block.start?.processed_at)}
        {block.end
          ? usage
            ? ` · ${usage.input_tokens ?? 0} in / ${usage.output_tokens ?? 0} out`
            : block.end.is_error === null
              ? ' · cancelled'
              : ' · failed'
          : ' · running…'}
      </div>
      {block.events.map((e) => (
        <EventRow key={e.id} event={e} tools={tools} />
      ))}
    </div>
  );
}

/** One event as the transcript shows it, then its raw JSON (id, timing, usage) behind a disclosure. */
function EventRow(props: { event: ConsoleEvent; tools: Map<string, ToolCallState> }) {
  return (
    <>
      <EventBody {...props} />
      <Inspect event={props.event} />
    </>
  );
}

/** The event inspector: the event exactly as the API returned it, with when it was processed. */
function Inspect({ event: e }: { event: ConsoleEvent }) {
  return (
    <details class="raw" data-testid="event-raw" data-event-id={e.id}>
      <summary class="dim">
        {e.type} · {when(e.processed_at)} · raw
      </summary>
      <pre>{JSON.stringify(e, null, 2)}</pre>
    </details>
  );
}

function EventBody({ event: e, tools }: { event: ConsoleEvent; tools: Map<string, ToolCallState> }) {
  const anchor = (
    <a class="anchor dim" href={`#${e.id}`} title={e.id}>
      #
    </a>
  );
  switch (e.type) {
    case 'user.message':
      return (
        <div class="msg user" id={e.id}>
          {anchor}
          <span class="who">you</span> {textOf(e.content)}
        </div>
      );
    case 'agent.message':
      return (
        <div class="msg agent" id={e.id}>
          {anchor}
          <span class="who">agent</span> {textOf(e.content)}
        </div>
      );
    case 'agent.thinking':
      return (
        <div class="msg thinking dim" id={e.id}>
          {anchor}thinking…
        </div>
      );
    default:
      break;
  }
  if (isToolUse(e)) {
    const s = tools.get(e.id);
    const result = s?.result;
    return (
      <div class="tool" id={e.id} data-testid="tool-call">
        {anchor}
        <span class="who">tool</span> <strong>{String(e.name)}</strong>
        {e.evaluated_permission ? (
          <span class={`perm perm-${String(e.evaluated_permission)}`}>{String(e.evaluated_permission)}</span>
        ) : null}
        {s?.confirmation ? (
          <span class={`perm perm-${String(s.confirmation.result)}`}>
            {s.confirmation.result === 'allow' ? 'allowed' : 'denied'}
            {s.confirmation.deny_message ? `: ${String(s.confirmation.deny_message)}` : ''}
          </span>
        ) : null}
        <details open>
          <summary>input</summary>
          <pre>{JSON.stringify(e.input ?? {}, null, 2)}</pre>
        </details>
        {result && (
          <details open>
            <summary>{result.is_error ? 'error' : 'result'}</summary>
            <pre>{textOf(result.content)}</pre>
          </details>
        )}
      </div>
    );
  }
  // Results are shown with their call; other bookkeeping as one quiet line.
  if (answersToolUse(e)) return <div id={e.id} class="hidden-anchor" />;
  const detail =
    e.type === 'session.status_idle'
      ? ` (${String((e.stop_reason as { type?: string } | undefined)?.type ?? '')})`
      : e.type === 'session.error'
        ? `: ${String((e.error as { message?: string } | undefined)?.message ?? '')}`
        : '';
  return (
    <div class="event dim" id={e.id}>
      {anchor}
      {e.type}
      {detail} · {when(e.processed_at)}
    </div>
  );
}

function Composer({
  status,
  send,
  lane,
}: {
  status: string;
  send: (b: Record<string, unknown>) => Promise<boolean>;
  lane: string;
}) {
  const [text, setText] = useState('');
  const submit = async (ev: Event) => {
    ev.preventDefault();
    if (!text.trim()) return;
    if (await send({ type: 'user.message', content: [{ type: 'text', text }] })) setText('');
  };
  const interrupt = () =>
    send({ type: 'user.interrupt', ...(lane !== PRIMARY ? { session_thread_id: lane } : {}) });
  return (
    <form class="composer" onSubmit={submit}>
      <input
        name="message"
        placeholder="Send a message to the Agent"
        value={text}
        disabled={status === 'terminated'}
        onInput={(e) => setText((e.target as HTMLInputElement).value)}
      />
      <button type="submit" disabled={status === 'terminated'}>
        Send
      </button>
      <button
        type="button"
        class="interrupt"
        onClick={interrupt}
        disabled={status === 'terminated' || status === 'idle'}
      >
        Interrupt
      </button>
    </form>
  );
}
