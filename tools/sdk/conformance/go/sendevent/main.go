// sendevent sends one user.message with the Go SDK (its default retries and Idempotency-Key) and prints
// what the SDK saw as JSON: apps/orchestrator/test/idempotent-retries.e2e-spec.ts runs it through a proxy
// that cuts the first response after its headers. Reads MANGO_BASE_URL, MANGO_API_KEY, MANGO_SESSION_ID
// and MANGO_TEXT.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"mango.dev/sdk/mango"
)

func main() {
	c, err := mango.New(os.Getenv("MANGO_BASE_URL"), os.Getenv("MANGO_API_KEY"))
	if err != nil {
		fail(err)
	}
	body, _ := json.Marshal(map[string]any{"events": []any{map[string]any{
		"type":    "user.message",
		"content": []any{map[string]any{"type": "text", "text": os.Getenv("MANGO_TEXT")}},
	}}})
	var info mango.ResponseInfo
	ctx := mango.WithResponseInfo(context.Background(), &info)
	sent, err := mango.Decode[struct {
		Data []json.RawMessage `json:"data"`
	}](c.SessionsEventsSendWithBody(ctx, os.Getenv("MANGO_SESSION_ID"), "application/json", bytes.NewReader(body)))
	if err != nil {
		fail(err)
	}
	out, _ := json.Marshal(map[string]any{
		"events":          len(sent.Data),
		"replayed":        info.Replayed,
		"request_id":      info.RequestID,
		"idempotency_key": info.IdempotencyKey,
	})
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sendevent:", err)
	os.Exit(1)
}
