// The Go conformance program: the SDK module (libs/sdk/go via replace) against a real deployment, plus
// its EnvironmentWorker against a real Environment: a healthcheck and a bash tool turn, with bash run
// as a host process in the worker's Workdir, that reads the SKILL.md of the Skill the Session's Agent
// pins (staged by the worker), reads a Memory of the Store the Session attaches (mounted by the worker
// below its MemoryRoot) and writes a new file there, which the worker uploads as a Memory by the end of
// the activation (tools/sdk/test/conformance.e2e-spec.ts starts it).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"mango.dev/sdk/generated"
	"mango.dev/sdk/mango"
	"mango.dev/sdk/worker"
)

const lang = "go"

type ev = map[string]any

func must[T any](v T, err error) T {
	if err != nil {
		fail("%v", err)
	}
	return v
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "conformance: "+format+"\n", args...)
	os.Exit(1)
}

func check(cond bool, format string, args ...any) {
	if !cond {
		fail(format, args...)
	}
}

func jsonBody(v any) io.Reader { b, _ := json.Marshal(v); return bytes.NewReader(b) }

func str(m ev, path ...string) string {
	var cur any = m
	for _, p := range path {
		next, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = next[p]
	}
	s, _ := cur.(string)
	return s
}

func events(ctx context.Context, c *mango.Client, sessionID string, limit int) []ev {
	var out []ev
	for e, err := range c.Sessions.Events.ListAll(ctx, sessionID, &generated.SessionsEventsListParams{Limit: &limit}) {
		must(0, err)
		raw, _ := json.Marshal(e)
		var m ev
		_ = json.Unmarshal(raw, &m)
		out = append(out, m)
	}
	return out
}

func waitIdles(ctx context.Context, c *mango.Client, sessionID string, n int) []ev {
	for i := 0; i < 600; i++ {
		list := events(ctx, c, sessionID, 100)
		idles := 0
		for _, e := range list {
			if e["type"] == "session.status_idle" {
				idles++
			}
		}
		if idles >= n {
			return list
		}
		time.Sleep(200 * time.Millisecond)
	}
	fail("session %s did not reach %d idles", sessionID, n)
	return nil
}

func sessions(ctx context.Context, c *mango.Client) {
	agent := must(mango.Decode[generated.Agent](c.AgentsCreateWithBody(ctx, "application/json", jsonBody(ev{
		"name": "conformance-" + lang, "model": "claude-sonnet-4-6",
		"tools": []ev{{"type": "custom", "name": "lookup", "description": "Look a thing up", "input_schema": ev{"type": "object"}}},
	}))))
	session := must(mango.Decode[ev](c.SessionsCreateWithBody(ctx, "application/json", jsonBody(ev{
		"agent": agent.Id, "environment_id": os.Getenv("MANGO_ENVIRONMENT_ID"),
		"budget":         ev{"type": "limit", "max_list_cost": ev{"amount": "1", "currency": "USD"}},
		"initial_events": []ev{{"type": "user.message", "content": []ev{{"type": "text", "text": "conformance " + lang}}}},
	}))))
	id := (*session)["id"].(string)
	check(str(*session, "budget", "max_list_cost", "amount") == "1", "the Session carries its budget")

	// Stream from the start, stop after two events, resume with Last-Event-ID until idle.
	var streamed []ev
	resume := ""
	for e, err := range c.Sessions.Events.Stream(ctx, id, mango.StreamOptions{}) {
		must(0, err)
		var m ev
		_ = json.Unmarshal(e.Data, &m)
		streamed, resume = append(streamed, m), e.ID
		if len(streamed) == 2 {
			break
		}
	}
	for e, err := range c.Sessions.Events.Stream(ctx, id, mango.StreamOptions{LastEventID: resume}) {
		must(0, err)
		var m ev
		_ = json.Unmarshal(e.Data, &m)
		streamed = append(streamed, m)
		if e.Type == "session.status_idle" {
			break
		}
	}
	check(str(streamed[len(streamed)-1], "stop_reason", "type") == "requires_action", "first turn ends requires_action")
	paged := events(ctx, c, id, 2)
	check(len(paged) == len(streamed), "paged %d == streamed %d", len(paged), len(streamed))
	for i := range paged {
		check(paged[i]["id"] == streamed[i]["id"], "event %d: paged %v, streamed %v (gap or duplicate)", i, paged[i]["id"], streamed[i]["id"])
	}

	s := must(c.Sessions.Retrieve(ctx, id))
	raw, _ := json.Marshal(s.Usage)
	var usage ev
	_ = json.Unmarshal(raw, &usage)
	check(usage["input_tokens"] == float64(2000) && usage["output_tokens"] == float64(400), "usage %v", usage)
	check(str(usage, "list_cost", "amount") == "2" && str(usage, "list_cost", "currency") == "USD", "list_cost %v", usage["list_cost"])

	var useID string
	for _, e := range paged {
		if e["type"] == "agent.custom_tool_use" {
			useID = e["id"].(string)
		}
	}
	check(useID != "", "an agent.custom_tool_use")
	must(0, mango.Check(c.SessionsEventsSendWithBody(ctx, id, "application/json", jsonBody(ev{"events": []ev{{
		"type": "user.custom_tool_result", "custom_tool_use_id": useID, "content": []ev{{"type": "text", "text": "42"}},
	}}}))))
	after := waitIdles(ctx, c, id, 2)
	var gate ev
	for _, e := range after {
		if e["type"] == "session.usage" {
			gate = e
		}
	}
	check(gate != nil, "a session.usage event")
	check(str(gate, "usage", "list_cost", "amount") == "2" && str(gate, "budget", "max_list_cost", "amount") == "1", "session.usage %v", gate)
	check(str(after[len(after)-1], "stop_reason", "type") == "budget_reached", "budget_reached")
}

func files(ctx context.Context, c *mango.Client) {
	data := make([]byte, 5*1024*1024+12345)
	for i := range data {
		data[i] = byte(i*31 + i>>11)
	}
	file := must(c.Files.Upload(ctx, mango.NewMultipart().File("file", "conformance-go.bin", "application/octet-stream", bytes.NewReader(data))))
	check(file.SizeBytes == len(data), "uploaded %d bytes", file.SizeBytes)
	limit := 1
	found := false
	for f, err := range c.Files.ListAll(ctx, &generated.FilesListParams{Limit: &limit}) {
		must(0, err)
		found = found || f.Id == file.Id
	}
	check(found, "the File is listed")
	res := must(c.Files.Content(ctx, file.Id))
	got := must(io.ReadAll(res.Body))
	_ = res.Body.Close()
	check(bytes.Equal(got, data), "download is byte-identical (%d bytes)", len(got))
	deleted := must(c.Files.Delete(ctx, file.Id))
	check(deleted.Id == file.Id, "deleted")
	_, err := c.Files.Retrieve(ctx, file.Id)
	apiErr, ok := mango.AsError(err)
	check(errors.Is(err, mango.ErrNotFound) && ok && apiErr.RequestID != "", "a deleted File is 404 with a request id: %v", err)
}

// hostBash runs one bash command as a host process in dir (the fallback for the Docker sandbox).
func hostBash(dir string) worker.Tool {
	return worker.ToolFunc{ToolName: "bash", Fn: func(ctx context.Context, in map[string]any) (string, error) {
		cmd, _ := in["command"].(string)
		c := exec.CommandContext(ctx, "bash", "-c", cmd)
		c.Dir = dir
		// No Mango credential reaches the tool's environment.
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		out, err := c.CombinedOutput()
		return string(out), err
	}}
}

func environmentWorker(ctx context.Context, ws *mango.Client) {
	envID := os.Getenv("MANGO_WORKER_ENVIRONMENT_ID")
	envKey := must(mango.New(os.Getenv("MANGO_BASE_URL"), os.Getenv("MANGO_WORKER_ENVIRONMENT_KEY")))
	dir := must(os.MkdirTemp("", "mango-conformance-"))
	defer os.RemoveAll(dir)
	// The Memory mounts: /mnt/memory in a sandbox; a private directory for this host process.
	memoryRoot := must(os.MkdirTemp("", "mango-conformance-memory-"))
	defer os.RemoveAll(memoryRoot)
	var workerErrs []error
	var setups []worker.ToolSetup
	w := &worker.EnvironmentWorker{
		Client: envKey, EnvironmentID: envID, WorkerID: "conformance-go", Block: 2 * time.Second,
		LeaseTTL: 30 * time.Second, MaxIdle: 2 * time.Second, Workdir: dir, MemoryRoot: memoryRoot,
		// The tool factory: built once the Skills are staged and the Memory Stores mounted.
		NewTools: func(_ context.Context, setup worker.ToolSetup) ([]worker.Tool, error) {
			setups = append(setups, setup)
			return []worker.Tool{hostBash(dir)}, nil
		},
		Healthcheck: func(ctx context.Context) error {
			probe := filepath.Join(dir, "probe")
			out, err := exec.CommandContext(ctx, "bash", "-c", `printf ok > "$0" && cat "$0"`, probe).Output()
			if err != nil || string(out) != "ok" {
				return fmt.Errorf("probe: %q %v", out, err)
			}
			return nil
		},
		OnError: func(err error) { workerErrs = append(workerErrs, err) },
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	drain := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx, drain) }()

	// A healthcheck created with the Workspace key; the worker claims it with the Environment key.
	created := must(ws.Environments.Work.Create(ctx, envID, generated.EnvironmentsWorkCreateJSONRequestBody(must(healthcheckBody()))))
	var hc *generated.RedactedWork
	for i := 0; i < 300; i++ {
		hc = must(ws.Environments.Work.Retrieve(ctx, envID, created.Id))
		if hc.Result != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	check(hc.Result != nil && string(hc.Result.Status) == "succeeded", "healthcheck result %+v (worker errors %v)", hc.Result, workerErrs)

	// A custom Skill the Agent pins ("latest": the Session freezes it to version 1).
	skillBody := "---\nname: conformance-go\ndescription: The Go conformance Skill.\n---\n# conformance-go\nskill-body-" + lang + "-ok\n"
	skill := must(ws.Skills.Create(ctx, mango.NewMultipart().
		File("files[]", "conformance-go/SKILL.md", "text/markdown", strings.NewReader(skillBody)).
		File("files[]", "conformance-go/scripts/hello.sh", "text/x-shellscript", strings.NewReader("echo hello\n"))))
	check(skill.LatestVersion != nil && *skill.LatestVersion == "1", "the Skill's latest version %v", skill.LatestVersion)

	// A Memory Store with one Memory, attached read_write: mounted at <MemoryRoot>/conformance-go-memory.
	store := must(ws.MemoryStores.Create(ctx, generated.MemoryStoresCreateJSONRequestBody{Name: "Conformance Go Memory"}))
	must(ws.MemoryStores.Memories.Create(ctx, store.Id, nil, generated.MemoryStoresMemoriesCreateJSONRequestBody{
		Path: "/seed.md", Content: "memory-seed-" + lang + "-ok\n"}))
	mounted := filepath.Join(memoryRoot, "conformance-go-memory")
	// What a worker that died mid-item leaves there: the mount with its marker and a file no pass uploaded.
	// The worker takes it over (MemoryRoot is not locked by a live worker): the stale file is removed, so
	// the tool does not see it and it is not uploaded.
	must(0, os.MkdirAll(mounted, 0o700))
	must(0, os.WriteFile(filepath.Join(mounted, worker.MemoryMarkerFile), []byte("version 1\n"+store.Id+"\n"), 0o400))
	must(0, os.WriteFile(filepath.Join(mounted, "stale.md"), []byte("stale-leftover"), 0o600))

	// A bash tool turn: the model asks for bash (the command the message names), the worker runs it in
	// its Workdir, where it staged the Skill, and posts the result; the model finishes. The command also
	// reads the mounted Memory and writes a new file in the writable Store.
	agent := must(mango.Decode[generated.Agent](ws.AgentsCreateWithBody(ctx, "application/json", jsonBody(ev{
		"name": "conformance-go-coder", "model": "claude-sonnet-4-6", "tools": []ev{{"type": "agent_toolset_20260401"}},
		"skills": []ev{{"type": "custom", "skill_id": skill.Id, "version": "latest"}},
	}))))
	command := "echo conformance-bash && cat skills/conformance-go/SKILL.md && ls skills/conformance-go/scripts" +
		" && ls -A " + mounted + " && cat " + mounted + "/seed.md && mkdir -p " + mounted + "/notes && printf memory-written-by-" + lang + " > " + mounted + "/notes/from-tool.md"
	session := must(mango.Decode[ev](ws.SessionsCreateWithBody(ctx, "application/json", jsonBody(ev{
		"agent": agent.Id, "environment_id": envID,
		"resources":      []ev{{"type": "memory_store", "memory_store_id": store.Id, "access": "read_write"}},
		"initial_events": []ev{{"type": "user.message", "content": []ev{{"type": "text", "text": "run bash: " + command}}}},
	}))))
	sid := (*session)["id"].(string)
	frozen, _ := (*session)["agent"].(map[string]any)["skills"].([]any)
	check(len(frozen) == 1 && str(frozen[0].(map[string]any), "version") == "1" && str(frozen[0].(map[string]any), "skill_id") == skill.Id,
		"the Session froze the Skill pin to version 1: %v", frozen)
	resources, _ := (*session)["resources"].([]any)
	check(len(resources) == 1 && str(resources[0].(map[string]any), "mount_path") == "/mnt/memory/conformance-go-memory",
		"the Session attaches the Store at /mnt/memory/conformance-go-memory: %v", resources)
	list := waitIdles(ctx, ws, sid, 1)
	var result ev
	for _, e := range list {
		if e["type"] == "user.tool_result" {
			result = e
		}
	}
	check(result != nil, "a user.tool_result (events %v, worker errors %v)", types(list), workerErrs)
	text, _ := json.Marshal(result["content"])
	check(strings.Contains(string(text), "conformance-bash") && result["is_error"] == false, "tool result %s", text)
	check(strings.Contains(string(text), "skill-body-"+lang+"-ok") && strings.Contains(string(text), "hello.sh"),
		"the bash tool read the staged Skill: %s (worker errors %v)", text, workerErrs)
	check(strings.Contains(string(text), "memory-seed-"+lang+"-ok"), "the bash tool read the mounted Memory: %s (worker errors %v)", text, workerErrs)
	check(!strings.Contains(string(text), "stale.md"), "the leftover mount's file is gone: %s", text)
	var tookOver bool
	for _, err := range workerErrs {
		tookOver = tookOver || strings.Contains(err.Error(), "removing the leftover mount")
	}
	check(tookOver, "the worker warned that it removed the leftover mount: %v", workerErrs)
	check(len(setups) == 1 && len(setups[0].Roots) == 1 && setups[0].Roots[0].Path == mounted && !setups[0].Roots[0].ReadOnly &&
		setups[0].Roots[0].MemoryStoreID == store.Id, "the tool factory got the writable root %s: %+v", mounted, setups)
	check(str(list[len(list)-1], "stop_reason", "type") == "end_turn", "the turn ends end_turn: %v", types(list))

	close(drain)
	select {
	case err := <-done:
		check(err == nil, "worker: %v", err)
	case <-time.After(60 * time.Second):
		fail("the worker did not drain")
	}
	// The runner stopped on idle and force-Stopped its Work.
	var stopped bool
	for i := 0; i < 100 && !stopped; i++ {
		for wk, err := range ws.Environments.Work.ListAll(ctx, envID, nil) {
			must(0, err)
			if kind, _ := wk.Data.Discriminator(); kind == "session" && wk.State == "stopped" {
				stopped = true
			}
		}
		if !stopped {
			time.Sleep(200 * time.Millisecond)
		}
	}
	check(stopped, "the Session Work is stopped")
	// The staged tree and the Memory mount are removed when the Work ends.
	_, err := os.Lstat(filepath.Join(dir, "skills"))
	check(errors.Is(err, os.ErrNotExist), "the staged Skills are removed after the Work: %v", err)
	_, err = os.Lstat(mounted)
	check(errors.Is(err, os.ErrNotExist), "the Memory mount is removed after the Work: %v", err)
	// The file the tool wrote is a Memory now (the activation's final sync uploaded it), written as the Session.
	var written *generated.Memory
	for raw, err := range ws.MemoryStores.Memories.ListAll(ctx, store.Id, &generated.MemoryStoresMemoriesListParams{}) {
		var m generated.Memory
		check(err == nil && json.Unmarshal(raw, &m) == nil, "listing the memories: %v", err)
		check(m.Path != "/stale.md", "the leftover mount's file was uploaded as a Memory")
		if m.Path == "/notes/from-tool.md" {
			full := generated.MemoryStoresMemoriesRetrieveParamsViewFull
			written = must(ws.MemoryStores.Memories.Retrieve(ctx, store.Id, m.Id, &generated.MemoryStoresMemoriesRetrieveParams{View: &full}))
		}
	}
	check(written != nil && written.Content != nil && *written.Content == "memory-written-by-"+lang,
		"the tool's file is a Memory: %+v (worker errors %v)", written, workerErrs)
	sessionID := sid
	var byTheSession bool
	for v, err := range ws.MemoryStores.MemoryVersions.ListAll(ctx, store.Id, &generated.MemoryStoresMemoryVersionsListParams{SessionId: &sessionID}) {
		must(0, err)
		byTheSession = byTheSession || (v.MemoryId == written.Id && v.Operation == "created")
	}
	check(byTheSession, "the Memory was created by the Session %s", sid)
}

func healthcheckBody() (generated.WorkCreateRequest, error) {
	var body generated.WorkCreateRequest
	err := json.Unmarshal([]byte(`{"data":{"type":"healthcheck"}}`), &body)
	return body, err
}

func types(list []ev) []any {
	out := make([]any, len(list))
	for i, e := range list {
		out[i] = e["type"]
	}
	return out
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := must(mango.New(os.Getenv("MANGO_BASE_URL"), os.Getenv("MANGO_API_KEY"), mango.WithHTTPClient(&http.Client{})))
	sessions(ctx, c)
	files(ctx, c)
	environmentWorker(ctx, c)
	fmt.Println("CONFORMANCE OK go", mango.Version)
}
