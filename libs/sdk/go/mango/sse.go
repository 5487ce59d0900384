package mango

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"mango.dev/sdk/generated"
)

// SSEFrame is one dispatched Server-Sent Events frame.
type SSEFrame struct {
	// ID is this frame's id: field ("" when it had none; not carried over from earlier frames).
	ID string
	// Event is the event: field, "message" when absent.
	Event string
	// Data is the data: lines joined with "\n".
	Data string
}

// SSEParser is an incremental text/event-stream parser: lines end with CRLF, LF or CR; a blank line
// dispatches a frame; ":" lines are comments; one space after the field's colon is dropped; frames
// without data: are not dispatched; retry: and unknown fields are ignored.
type SSEParser struct {
	buf   string
	data  []string
	event string
	id    string
}

// Push feeds decoded text and returns the frames it completed.
func (p *SSEParser) Push(text string) []SSEFrame {
	p.buf += text
	var frames []SSEFrame
	start := 0
	for i := 0; i < len(p.buf); i++ {
		ch := p.buf[i]
		if ch != '\n' && ch != '\r' {
			continue
		}
		// A CR at the very end may be the first half of a CRLF split across chunks.
		if ch == '\r' && i == len(p.buf)-1 {
			break
		}
		if f, ok := p.line(p.buf[start:i]); ok {
			frames = append(frames, f)
		}
		if ch == '\r' && p.buf[i+1] == '\n' {
			i++
		}
		start = i + 1
	}
	p.buf = p.buf[start:]
	return frames
}

func (p *SSEParser) line(line string) (SSEFrame, bool) {
	if line == "" {
		f := SSEFrame{ID: p.id, Event: p.event, Data: strings.Join(p.data, "\n")}
		ok := len(p.data) > 0
		if f.Event == "" {
			f.Event = "message"
		}
		p.data, p.event, p.id = nil, "", ""
		return f, ok
	}
	if strings.HasPrefix(line, ":") {
		return SSEFrame{}, false
	}
	field, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch field {
	case "data":
		p.data = append(p.data, value)
	case "event":
		p.event = value
	case "id":
		if !strings.ContainsRune(value, 0) {
			p.id = value
		}
	}
	return SSEFrame{}, false
}

// StreamEvent is one Session event read from the stream.
type StreamEvent struct {
	// ID is the event's sequence number as sent in the SSE id: field; pass it as Last-Event-ID to resume.
	ID string
	// Type is the event's type (e.g. user.message, session.status_idle).
	Type string
	// Data is the event JSON; decode it with Event or into a concrete generated.SessionEventN.
	Data json.RawMessage
}

// Event decodes Data into the generated SessionEvent union.
func (e StreamEvent) Event() (generated.SessionEvent, error) {
	var ev generated.SessionEvent
	err := ev.UnmarshalJSON(e.Data)
	return ev, err
}

// StreamOptions configures StreamEvents.
type StreamOptions struct {
	// LastEventID resumes after this sequence number ("" starts at the beginning of the Session).
	LastEventID string
	// IdleTimeout cuts a connection that receives nothing (not even a keep-alive ping) for this long and
	// reconnects. Default: the client's timeout.
	IdleTimeout time.Duration
	// MaxRetries is how many consecutive failed connections are retried. Default: the client's setting.
	MaxRetries *int
	// Query adds query parameters (e.g. event_deltas[]).
	Query url.Values
}

// StreamEvents reads GET /v1/sessions/{id}/events/stream as Server-Sent Events. Pings are skipped. When
// the connection drops or goes idle, it reconnects with Last-Event-ID set to the last yielded id, so every
// event is seen once and in order; MaxRetries consecutive failed connections (with backoff) end the
// iteration with the last error. Iteration ends after session.deleted, or when ctx is done (yielding
// ctx.Err()). A non-retryable HTTP error (e.g. 404) is yielded as *Error.
func (c *Client) StreamEvents(ctx context.Context, sessionID string, opts StreamOptions) iter.Seq2[StreamEvent, error] {
	return c.streamPath(ctx, "/v1/sessions/"+url.PathEscape(sessionID)+"/events/stream", opts)
}

// streamPath is StreamEvents for any event-stream path (Sessions.Events.Stream, Sessions.Threads.Stream).
func (c *Client) streamPath(ctx context.Context, path string, opts StreamOptions) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		maxRetries := c.maxRetries
		if opts.MaxRetries != nil {
			maxRetries = *opts.MaxRetries
		}
		idle := opts.IdleTimeout
		if idle <= 0 {
			idle = c.timeout
		}
		streamURL := c.baseURL + path
		if len(opts.Query) > 0 {
			streamURL += "?" + opts.Query.Encode()
		}
		lastID := opts.LastEventID
		failures := 0
		for {
			yielded, done, retryHeader, err := c.streamOnce(ctx, streamURL, &lastID, idle, yield)
			if done {
				return
			}
			if ctx.Err() != nil {
				yield(StreamEvent{}, ctx.Err())
				return
			}
			var apiErr *Error
			if errors.As(err, &apiErr) && !IsRetryableStatus(apiErr.Status) {
				yield(StreamEvent{}, err)
				return
			}
			if yielded {
				failures = 0
			}
			if failures >= maxRetries {
				yield(StreamEvent{}, err)
				return
			}
			if serr := c.sleep(ctx, RetryDelay(failures, retryHeader)); serr != nil {
				yield(StreamEvent{}, serr)
				return
			}
			failures++
		}
	}
}

// streamOnce reads one connection. done means iteration is over (session.deleted or the consumer stopped).
func (c *Client) streamOnce(ctx context.Context, streamURL string, lastID *string, idle time.Duration,
	yield func(StreamEvent, error) bool) (yielded, done bool, retryHeader http.Header, err error) {
	connCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(connCtx, http.MethodGet, streamURL, nil)
	if err != nil {
		return false, false, nil, err
	}
	c.authorize(req, "text/event-stream")
	if *lastID != "" {
		req.Header.Set("Last-Event-ID", *lastID)
	}
	// The idle timer covers the wait for headers and then every silence between chunks.
	var timedOut atomic.Bool
	timer := time.AfterFunc(idle, func() { timedOut.Store(true); cancel() })
	defer timer.Stop()
	res, err := c.httpClient.Do(req)
	if err != nil {
		return false, false, nil, &ConnectionError{Method: http.MethodGet, URL: req.URL.Redacted(), Err: err}
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode >= 300 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return false, false, res.Header, ErrorFromResponse(res.StatusCode, res.Header, body)
	}
	parser := &SSEParser{}
	reader := bufio.NewReader(res.Body)
	chunk := make([]byte, 32*1024)
	for {
		n, rerr := reader.Read(chunk)
		if n > 0 {
			timer.Reset(idle)
			for _, f := range parser.Push(string(chunk[:n])) {
				if f.Event == "ping" {
					continue
				}
				// Defensive: never yield an event at or before one already yielded.
				if f.ID != "" && *lastID != "" && !isAfter(f.ID, *lastID) {
					continue
				}
				var head struct {
					Type string `json:"type"`
				}
				if jerr := json.Unmarshal([]byte(f.Data), &head); jerr != nil || head.Type == "" {
					yield(StreamEvent{}, &Error{Type: "api_error", Message: "event stream frame is not a Session event"})
					return false, true, nil, nil
				}
				if f.ID != "" {
					*lastID = f.ID
				}
				yielded = true
				if !yield(StreamEvent{ID: *lastID, Type: head.Type, Data: json.RawMessage(f.Data)}, nil) {
					return true, true, nil, nil
				}
				if head.Type == "session.deleted" {
					return true, true, nil, nil
				}
			}
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return yielded, false, nil, ctx.Err()
			}
			cause := rerr
			if rerr == io.EOF {
				cause = errors.New("event stream closed before session.deleted")
			} else if timedOut.Load() {
				cause = fmt.Errorf("no data for %s: %w", idle, context.DeadlineExceeded)
			}
			return yielded, false, nil, &ConnectionError{Method: http.MethodGet, URL: req.URL.Redacted(), Err: cause}
		}
	}
}

// isAfter reports whether SSE id a comes after b; ids that are not both sequence numbers count as in order.
func isAfter(a, b string) bool {
	digits := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	if !digits(a) || !digits(b) {
		return true
	}
	x, y := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(x) != len(y) {
		return len(x) > len(y)
	}
	return x > y
}
