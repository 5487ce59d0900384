//go:build live

// Live tests against a real Mango API process. tools/sdk/test/go-sdk.e2e-spec.ts starts apps/api and runs
// `go test -tags live` with MANGO_BASE_URL, MANGO_API_KEY (Workspace key), MANGO_ENVIRONMENT_ID and
// MANGO_ENVIRONMENT_KEY (an Environment key for that Environment) set.
package mango

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"mango.dev/sdk/generated"
)

func liveEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set (run through tools/sdk/test/go-sdk.e2e-spec.ts)", name)
	}
	return v
}

func liveClient(t *testing.T) *Client {
	t.Helper()
	c, err := New(liveEnv(t, "MANGO_BASE_URL"), liveEnv(t, "MANGO_API_KEY"), WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// must unwraps a decoded response; a failure panics, which fails the test with a stack trace (Go cannot
// pass a multi-value call together with t).
func must[T any](v *T, err error) *T {
	if err != nil {
		panic(err)
	}
	if v == nil {
		panic("empty response body")
	}
	return v
}

func modelParam(t *testing.T, id string) generated.ModelParam {
	var m generated.ModelParam
	if err := m.FromModelId(id); err != nil {
		t.Fatal(err)
	}
	return m
}

func createAgent(t *testing.T, c *Client, name string) *generated.Agent {
	t.Helper()
	return must(Decode[generated.Agent](c.AgentsCreate(context.Background(),
		generated.AgentCreateRequest{Name: name, Model: modelParam(t, "claude-sonnet-4-6")})))
}

func TestLiveAgentsCreateUpdateRetrieveAndPaginate(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t)
	agent := createAgent(t, c, "go-agent")
	if agent.Version != 1 || agent.Name != "go-agent" || !strings.HasPrefix(agent.Id, "agent_") {
		t.Fatalf("created %+v", agent)
	}
	one, two := 1, "two"
	v2 := must(Decode[generated.Agent](c.AgentsUpdate(ctx, agent.Id, generated.AgentUpdateRequest{Version: &one, Description: &two})))
	if v2.Version != 2 || v2.Description == nil || *v2.Description != "two" {
		t.Fatalf("updated %+v", v2)
	}
	stale := "stale"
	_, err := Decode[generated.Agent](c.AgentsUpdate(ctx, agent.Id, generated.AgentUpdateRequest{Version: &one, Description: &stale}))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("stale update: %v", err)
	}
	first := must(Decode[generated.Agent](c.AgentsRetrieve(ctx, agent.Id, &generated.AgentsRetrieveParams{Version: &one})))
	if first.Version != 1 || first.Description != nil {
		t.Fatalf("version 1: %+v", first)
	}

	created := map[string]bool{agent.Id: true}
	for i := 0; i < 4; i++ {
		created[createAgent(t, c, "go-page").Id] = true
	}
	limit := 2
	fetch := func(ctx context.Context, page *string) (*http.Response, error) {
		return c.AgentsList(ctx, &generated.AgentsListParams{Limit: &limit, Page: page})
	}
	seen := map[string]bool{}
	for a, err := range All[generated.Agent](ctx, fetch) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[a.Id] {
			t.Fatalf("agent %s listed twice", a.Id)
		}
		seen[a.Id] = true
	}
	for id := range created {
		if !seen[id] {
			t.Fatalf("agent %s missing from the paginated list", id)
		}
	}
	pages := 0
	for page, err := range Pages[generated.Agent](ctx, fetch) {
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) > limit {
			t.Fatalf("page of %d items with limit %d", len(page.Data), limit)
		}
		pages++
	}
	if pages < 3 {
		t.Fatalf("%d pages for %d agents at limit %d", pages, len(seen), limit)
	}
}

func TestLiveErrorEnvelopes(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t)
	_, err := Decode[generated.Agent](c.AgentsRetrieve(ctx, "agent_01JD2Y3QX9V5M8K7R6T4W2P0ZZ", nil))
	e, ok := AsError(err)
	if !ok || !errors.Is(err, ErrNotFound) || e.Status != 404 || e.Type != "not_found_error" ||
		!strings.HasPrefix(e.RequestID, "req_") || e.Message == "" {
		t.Fatalf("404: %#v", err)
	}
	_, err = Decode[generated.Agent](c.AgentsCreateWithBody(ctx, "application/json", strings.NewReader(`{"name":""}`)))
	e, ok = AsError(err)
	if !ok || !errors.Is(err, ErrBadRequest) || e.Type != "invalid_request_error" || !strings.HasPrefix(e.RequestID, "req_") {
		t.Fatalf("400: %#v", err)
	}
	if e.RequestID != e.Header.Get("Request-Id") {
		t.Fatalf("envelope request_id %q != header %q", e.RequestID, e.Header.Get("Request-Id"))
	}
	anonymous, _ := New(c.BaseURL(), "mango_ak_nope", WithMaxRetries(0))
	_, err = Decode[Page[generated.Agent]](anonymous.AgentsList(ctx, nil))
	if e, ok := AsError(err); !ok || !errors.Is(err, ErrAuthentication) || !strings.HasPrefix(e.RequestID, "req_") {
		t.Fatalf("401: %#v", err)
	}
}

func TestLiveEnvironmentWorkFlowWithTheWorkSecret(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t)
	envID := liveEnv(t, "MANGO_ENVIRONMENT_ID")
	supervisor, err := c.WithToken(liveEnv(t, "MANGO_ENVIRONMENT_KEY"), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Decode[Page[generated.Environment]](supervisor.EnvironmentsList(ctx, nil))
	if !errors.Is(err, ErrPermissionDenied) {
		t.Fatalf("an Environment key listed Environments: %v", err)
	}
	env := must(Decode[generated.Environment](c.EnvironmentsRetrieve(ctx, envID)))
	if env.Id != envID {
		t.Fatalf("environment %+v", env)
	}

	work := must(Decode[generated.Work](c.EnvironmentsWorkCreate(ctx, envID, generated.WorkCreateRequest{Data: generated.HealthcheckWorkData{Type: "healthcheck"}})))
	worker := "go-sdk"
	polled := must(Decode[generated.PolledWork](supervisor.EnvironmentsWorkPoll(ctx, envID, &generated.EnvironmentsWorkPollParams{WorkerId: &worker})))
	if polled.Id != work.Id {
		t.Fatalf("polled %s, created %s", polled.Id, work.Id)
	}
	secret, err := DecodeWorkSecret(polled.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret.SessionsToken, "mango_wt_") || !isHTTPURL(secret.APIBaseURL) {
		t.Fatalf("secret fields have the wrong shape (api_base_url %q)", secret.APIBaseURL)
	}
	if err := Check(supervisor.EnvironmentsWorkAck(ctx, envID, work.Id)); err != nil {
		t.Fatal(err)
	}
	// The Work token, against the base URL from the secret.
	token, err := c.WithToken(secret.SessionsToken, secret.APIBaseURL)
	if err != nil {
		t.Fatal(err)
	}
	hb := must(Decode[generated.WorkHeartbeat](token.EnvironmentsWorkHeartbeat(ctx, envID, work.Id, &generated.EnvironmentsWorkHeartbeatParams{ExpectedLastHeartbeat: "NO_HEARTBEAT"})))
	if hb.State != "active" || !hb.LeaseExtended {
		t.Fatalf("heartbeat %+v", hb)
	}
	_, err = Decode[generated.WorkHeartbeat](token.EnvironmentsWorkHeartbeat(ctx, envID, work.Id, &generated.EnvironmentsWorkHeartbeatParams{ExpectedLastHeartbeat: "2020-01-01T00:00:00.000Z"}))
	e, ok := AsError(err)
	if !ok || !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("stale heartbeat: %v", err)
	}
	if state, _ := e.Details["current_state"].(map[string]any); state["state"] != "active" {
		t.Fatalf("412 details: %v", e.Details)
	}
	done := must(Decode[generated.Work](token.EnvironmentsWorkResult(ctx, envID, work.Id, generated.WorkResultRequest{Status: "succeeded", Message: "ok"})))
	if done.Result == nil || done.Result.Status != "succeeded" || done.Result.Message != "ok" {
		t.Fatalf("result %+v", done.Result)
	}
	// An empty queue answers {}.
	if again, err := Decode[generated.PolledWork](supervisor.EnvironmentsWorkPoll(ctx, envID, nil)); err != nil || again == nil || again.Id != "" {
		t.Fatalf("second poll: %+v, %v", again, err)
	}

	again := must(Decode[generated.Work](c.EnvironmentsWorkCreate(ctx, envID, generated.WorkCreateRequest{Data: generated.HealthcheckWorkData{Type: "healthcheck"}})))
	force := true
	if err := Check(c.EnvironmentsWorkStop(ctx, envID, again.Id, generated.WorkStopRequest{Force: &force})); err != nil {
		t.Fatal(err)
	}
	stopped := must(Decode[generated.RedactedWork](c.EnvironmentsWorkRetrieve(ctx, envID, again.Id)))
	if stopped.Result == nil || stopped.Result.Status != "cancelled" {
		t.Fatalf("force-stopped Work: %+v", stopped.Result)
	}
	gone := must(Decode[generated.EnvironmentDeleted](c.EnvironmentsDelete(ctx, envID)))
	if gone.Id != envID || gone.Type != "environment_deleted" {
		t.Fatalf("deleted %+v", gone)
	}
}

func userMessage(t *testing.T, text string) generated.UserMessageParams {
	var block generated.UserContentBlockParam
	if err := block.FromTextBlock(generated.TextBlock{Type: "text", Text: text}); err != nil {
		t.Fatal(err)
	}
	return generated.UserMessageParams{Type: "user.message", Content: []generated.UserContentBlockParam{block}}
}

// collect reads the stream until n events arrived (then stops iterating) or the stream ends.
func collect(t *testing.T, c *Client, sessionID, lastID string, n int) []StreamEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []StreamEvent
	for ev, err := range c.StreamEvents(ctx, sessionID, StreamOptions{LastEventID: lastID}) {
		if err != nil {
			t.Fatalf("stream after %q: %v (got %d events)", lastID, err, len(out))
		}
		out = append(out, ev)
		if len(out) == n {
			break
		}
	}
	return out
}

func ids(events []StreamEvent) string {
	parts := make([]string, len(events))
	for i, e := range events {
		parts[i] = e.ID
	}
	return strings.Join(parts, ",")
}

func TestLiveSessionEventsListAndStreamWithResume(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t)
	agent := createAgent(t, c, "go-session-agent")
	env := must(Decode[generated.Environment](c.EnvironmentsCreate(ctx, generated.EnvironmentCreateRequest{Name: "go-session-env"})))
	var sel generated.AgentSelectionParams
	if err := sel.FromAgentId(agent.Id); err != nil {
		t.Fatal(err)
	}
	title := "go sdk"
	var first generated.SessionCreateRequest_InitialEvents_Item
	if err := first.FromUserMessageParams(userMessage(t, "hello")); err != nil {
		t.Fatal(err)
	}
	initial := []generated.SessionCreateRequest_InitialEvents_Item{first}
	session := must(Decode[generated.Session](c.SessionsCreate(ctx, generated.SessionCreateRequest{
		Agent: sel, EnvironmentId: env.Id, Title: &title, InitialEvents: &initial,
	})))
	if session.Status != "running" || session.Agent.Id != agent.Id || session.Title == nil || *session.Title != title {
		t.Fatalf("session %+v", session)
	}

	var items []generated.SessionEventsSendRequest_Events_Item
	for _, text := range []string{"one", "two"} {
		var item generated.SessionEventsSendRequest_Events_Item
		if err := item.FromUserMessageParams(userMessage(t, text)); err != nil {
			t.Fatal(err)
		}
		items = append(items, item)
	}
	var interrupt generated.SessionEventsSendRequest_Events_Item
	if err := interrupt.FromUserInterruptParams(generated.UserInterruptParams{Type: "user.interrupt"}); err != nil {
		t.Fatal(err)
	}
	items = append(items, interrupt)
	sent := must(Decode[Page[generated.SessionEvent]](c.SessionsEventsSend(ctx, session.Id, generated.SessionEventsSendRequest{Events: items})))
	if len(sent.Data) != 3 {
		t.Fatalf("sent %d events", len(sent.Data))
	}

	limit := 1
	var listed []string
	for ev, err := range All[map[string]any](ctx, func(ctx context.Context, page *string) (*http.Response, error) {
		return c.SessionsEventsList(ctx, session.Id, &generated.SessionsEventsListParams{Limit: &limit, Page: page})
	}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, ev["type"].(string))
	}
	if got := strings.Join(listed, ","); got != "user.message,user.message,user.message,user.interrupt" {
		t.Fatalf("listed %s", got)
	}

	// From the beginning: every event once, in order, with sequence ids.
	all := collect(t, c, session.Id, "", 4)
	if ids(all) != "1,2,3,4" || all[0].Type != "user.message" || all[3].Type != "user.interrupt" {
		t.Fatalf("streamed %s", ids(all))
	}
	ev, err := all[1].Event()
	if err != nil {
		t.Fatal(err)
	}
	// SessionEvent9 is the user.message member of the generated union (positional, see docs/sdks.md).
	if msg, err := ev.AsSessionEvent9(); err != nil || msg.Type != "user.message" || len(msg.Content) != 1 {
		t.Fatalf("decoded %+v, %v", msg, err)
	}
	// Resume after 2: no gap, no duplicate.
	if got := ids(collect(t, c, session.Id, "2", 2)); got != "3,4" {
		t.Fatalf("resumed after 2: %s", got)
	}
	// New events arrive on a resumed stream.
	more := []generated.SessionEventsSendRequest_Events_Item{items[0]}
	must(Decode[Page[generated.SessionEvent]](c.SessionsEventsSend(ctx, session.Id, generated.SessionEventsSendRequest{Events: more})))
	// Resume after 4 on a live connection: event 5 arrives; deleting the Session then appends
	// session.deleted, which ends the iteration.
	streamCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var tail []StreamEvent
	for ev, err := range c.StreamEvents(streamCtx, session.Id, StreamOptions{LastEventID: "4"}) {
		if err != nil {
			t.Fatalf("stream after 4: %v (got %s)", err, ids(tail))
		}
		tail = append(tail, ev)
		if ev.ID == "5" {
			deleted := *must(Decode[map[string]any](c.SessionsDelete(ctx, session.Id)))
			if deleted["id"] != session.Id || deleted["type"] != "session_deleted" {
				t.Fatalf("deleted %v", deleted)
			}
		}
	}
	if len(tail) < 2 || tail[0].ID != "5" || tail[len(tail)-1].Type != "session.deleted" {
		t.Fatalf("stream after 4: %s ending with %v", ids(tail), tail[len(tail)-1].Type)
	}
	// A stream on an unknown Session is a typed 404, not retried.
	for _, err := range c.StreamEvents(ctx, "sesn_01JD2Y3QX9V5M8K7R6T4W2P0ZZ", StreamOptions{}) {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown session stream: %v", err)
		}
	}
}
