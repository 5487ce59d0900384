package mango

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	initialRetryDelay = 500 * time.Millisecond
	maxRetryDelay     = 8 * time.Second
	// A server-sent retry-after longer than this is ignored in favour of the computed backoff.
	maxRetryAfter = 60 * time.Second
)

// IsRetryableStatus reports whether a response status is worth retrying unchanged: 408, 429 and 5xx.
func IsRetryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// RetryDelay is the wait before retry number retry (0-based): exponential backoff from 500 ms, capped at
// 8 s, with up to 25 % downward jitter. A sane retry-after-ms or retry-after (seconds or HTTP date)
// response header takes precedence.
func RetryDelay(retry int, header http.Header) time.Duration {
	if d, ok := retryAfter(header); ok {
		return d
	}
	base := math.Min(float64(initialRetryDelay)*math.Pow(2, float64(retry)), float64(maxRetryDelay))
	return time.Duration(base * (1 - 0.25*rand.Float64()))
}

func retryAfter(h http.Header) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	var d time.Duration
	found := false
	if raw := strings.TrimSpace(h.Get("Retry-After-Ms")); raw != "" {
		if ms, err := strconv.ParseFloat(raw, 64); err == nil {
			d, found = time.Duration(ms*float64(time.Millisecond)), true
		}
	}
	if raw := strings.TrimSpace(h.Get("Retry-After")); !found && raw != "" {
		if s, err := strconv.ParseFloat(raw, 64); err == nil {
			d, found = time.Duration(s*float64(time.Second)), true
		} else if at, err := http.ParseTime(raw); err == nil {
			d, found = time.Until(at), true
		}
	}
	if !found || d < 0 || d > maxRetryAfter {
		return 0, false
	}
	return d, true
}

// retryDoer sends a request up to 1+maxRetries times: connection errors, timeouts, 408, 429, 5xx and a 409
// idempotency_in_progress are retried (every method, as the TypeScript SDK does) after RetryDelay, replaying the body via GetBody.
// Each attempt runs under the client's per-attempt timeout; the caller's context cancels everything.
type retryDoer struct{ c *Client }

func (d *retryDoer) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	addIdempotencyKey(req)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = body
		}
		res, err := d.once(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if attempt >= d.c.maxRetries || (req.Body != nil && req.GetBody == nil) {
				return nil, &ConnectionError{Method: req.Method, URL: req.URL.Redacted(), Err: err}
			}
			if err := d.c.sleep(ctx, RetryDelay(attempt, nil)); err != nil {
				return nil, err
			}
			continue
		}
		retryable := IsRetryableStatus(res.StatusCode) || isIdempotencyInProgress(req, res)
		if retryable && attempt < d.c.maxRetries && (req.Body == nil || req.GetBody != nil) {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
			_ = res.Body.Close()
			if err := d.c.sleep(ctx, RetryDelay(attempt, res.Header)); err != nil {
				return nil, err
			}
			continue
		}
		reportResponse(req, res)
		return res, nil
	}
}

// once performs one attempt and reads the whole body under the per-attempt timeout, so a stalled body
// is a (retryable) timeout too.
func (d *retryDoer) once(req *http.Request) (*http.Response, error) {
	if isStreaming(req.Context()) {
		return d.onceStreaming(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), d.c.timeout)
	defer cancel()
	res, err := d.c.httpClient.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ConnectionError means no usable response arrived: the connection failed, was reset or timed out.
type ConnectionError struct {
	Method string
	URL    string
	Err    error
}

func (e *ConnectionError) Error() string {
	return "mango: connection error: " + e.Method + " " + e.URL + ": " + e.Err.Error()
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// Timeout reports whether the attempt timed out.
func (e *ConnectionError) Timeout() bool { return errors.Is(e.Err, context.DeadlineExceeded) }
