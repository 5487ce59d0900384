package mango

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Error is a non-2xx response. Type, Message, Details and RequestID come from the error envelope
// ({"type":"error","error":{"type","message","details"},"request_id"}); RequestID falls back to the
// request-id header and Type to a default for the status when the body is not an envelope.
// Match kinds with errors.Is(err, mango.ErrNotFound) and friends, or read Status.
type Error struct {
	Status    int
	Type      string
	Message   string
	RequestID string
	Details   map[string]any
	Header    http.Header
}

func (e *Error) Error() string {
	s := fmt.Sprintf("mango: %d %s: %s", e.Status, e.Type, e.Message)
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Is matches the sentinel of the error's status class (ErrNotFound for 404, ErrServer for 5xx, …).
func (e *Error) Is(target error) bool {
	s, ok := target.(*statusClass)
	return ok && s.match(e.Status)
}

type statusClass struct {
	name  string
	match func(int) bool
}

func (s *statusClass) Error() string { return "mango: " + s.name }

func status(code int) func(int) bool { return func(s int) bool { return s == code } }

// Sentinels for errors.Is.
var (
	ErrBadRequest         error = &statusClass{"bad request (400)", status(400)}
	ErrAuthentication     error = &statusClass{"authentication error (401)", status(401)}
	ErrPermissionDenied   error = &statusClass{"permission denied (403)", status(403)}
	ErrNotFound           error = &statusClass{"not found (404)", status(404)}
	ErrConflict           error = &statusClass{"conflict (409)", status(409)}
	ErrPreconditionFailed error = &statusClass{"precondition failed (412)", status(412)}
	ErrRequestTooLarge    error = &statusClass{"request too large (413)", status(413)}
	ErrRateLimited        error = &statusClass{"rate limited (429)", status(429)}
	ErrServer             error = &statusClass{"server error (5xx)", func(s int) bool { return s >= 500 }}
)

var defaultTypeByStatus = map[int]string{
	400: "invalid_request_error",
	401: "authentication_error",
	403: "permission_error",
	404: "not_found_error",
	409: "invalid_request_error",
	412: "heartbeat_precondition_failed",
	413: "request_too_large",
	429: "rate_limit_error",
}

// ErrorFromResponse builds the *Error for a non-2xx status from its headers and raw body.
func ErrorFromResponse(status int, header http.Header, body []byte) *Error {
	var env struct {
		Error *struct {
			Type    *string        `json:"type"`
			Message *string        `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
		RequestID *string `json:"request_id"`
	}
	_ = json.Unmarshal(body, &env)
	e := &Error{Status: status, Header: header, RequestID: header.Get("Request-Id")}
	if env.Error != nil {
		if env.Error.Type != nil {
			e.Type = *env.Error.Type
		}
		if env.Error.Message != nil {
			e.Message = *env.Error.Message
		}
		e.Details = env.Error.Details
	}
	if env.RequestID != nil {
		e.RequestID = *env.RequestID
	}
	if e.Type == "" {
		if t, ok := defaultTypeByStatus[status]; ok {
			e.Type = t
		} else if status >= 500 {
			e.Type = "api_error"
		} else {
			e.Type = "unknown_error"
		}
	}
	if e.Message == "" {
		snippet := strings.Join(strings.Fields(string(body)), " ")
		if len(snippet) > 200 {
			snippet = snippet[:200]
		}
		e.Message = fmt.Sprintf("HTTP %d", status)
		if snippet != "" {
			e.Message += ": " + snippet
		}
	}
	return e
}

// Decode turns the (*http.Response, error) pair a generated operation returns into the decoded 2xx body,
// or an *Error for any other status. A 204, an empty body or JSON null (e.g. a Poll that found no Work)
// decodes to nil.
//
//	agent, err := mango.Decode[generated.Agent](c.AgentsRetrieve(ctx, id, nil))
func Decode[T any](res *http.Response, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, &ConnectionError{Method: res.Request.Method, URL: res.Request.URL.Redacted(), Err: err}
	}
	if res.StatusCode < 200 || res.StatusCode >= 300 {
		return nil, ErrorFromResponse(res.StatusCode, res.Header, body)
	}
	if res.StatusCode == http.StatusNoContent || len(bytes.TrimSpace(body)) == 0 || string(bytes.TrimSpace(body)) == "null" {
		return nil, nil
	}
	out := new(T)
	if err := json.Unmarshal(body, out); err != nil {
		return nil, &Error{Status: res.StatusCode, Type: "api_error", Message: "invalid JSON in a " +
			fmt.Sprint(res.StatusCode) + " response: " + err.Error(), RequestID: res.Header.Get("Request-Id"), Header: res.Header}
	}
	return out, nil
}

// Check is Decode for operations whose success body is not needed (e.g. 204 No Content).
func Check(res *http.Response, err error) error {
	_, err = Decode[json.RawMessage](res, err)
	return err
}

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
