package mango

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"mango.dev/sdk/generated"
)

func pascalPart(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}

// Every operationId of openapi.yaml is a method of its resource: environments.work.poll → c.Environments.Work.Poll.
func TestEveryOperationIsAResourceMethod(t *testing.T) {
	spec, err := os.ReadFile("../../../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`(?m)^\s+operationId:\s*([\w.]+)\s*$`).FindAllStringSubmatch(string(spec), -1)
	if len(ids) < 60 {
		t.Fatalf("only %d operations", len(ids))
	}
	c, _ := New("http://127.0.0.1:1", "k")
	for _, m := range ids {
		parts := strings.Split(m[1], ".")
		v := reflect.ValueOf(c.Resources)
		for _, p := range parts[:len(parts)-1] {
			if v.Kind() == reflect.Pointer {
				v = v.Elem()
			}
			v = v.FieldByName(pascalPart(p))
			if !v.IsValid() {
				t.Fatalf("%s: no resource %s", m[1], p)
			}
		}
		if !v.MethodByName(pascalPart(parts[len(parts)-1])).IsValid() {
			t.Errorf("%s: no method", m[1])
		}
	}
}

func TestUploadStreamsMultipartBytesAndContentStreamsTheBody(t *testing.T) {
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	var got []byte
	var filename, ctype string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/files":
			_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			mr := multipart.NewReader(r.Body, params["boundary"])
			part, err := mr.NextPart()
			if err != nil || part.FormName() != "file" {
				w.WriteHeader(400)
				return
			}
			filename, ctype = part.FileName(), part.Header.Get("Content-Type")
			got, _ = io.ReadAll(part)
			if _, err := mr.NextPart(); err != io.EOF {
				w.WriteHeader(400)
				return
			}
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(201)
			_, _ = io.WriteString(w, `{"id":"file_1","type":"file","filename":"a.bin","mime_type":"application/x-a","size_bytes":3145728,"created_at":"2026-12-01T10:00:00.000Z"}`)
		case r.URL.Path == "/v1/files/file_1/content":
			w.Header().Set("content-type", "application/octet-stream")
			_, _ = w.Write(data)
		case r.URL.Path == "/v1/files":
			w.Header().Set("content-type", "application/json")
			if r.URL.Query().Get("page") == "p2" {
				_, _ = io.WriteString(w, `{"data":[{"id":"file_2"}],"next_page":null}`)
			} else {
				_, _ = io.WriteString(w, `{"data":[{"id":"file_1"}],"next_page":"p2"}`)
			}
		default:
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"no"},"request_id":"req_1"}`)
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL, "k", WithMaxRetries(0))
	ctx := context.Background()
	file, err := c.Files.Upload(ctx, NewMultipart().File("file", "a.bin", "application/x-a", bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	if file.Id != "file_1" || filename != "a.bin" || ctype != "application/x-a" || !bytes.Equal(got, data) {
		t.Fatalf("upload: %s %q %q %d bytes", file.Id, filename, ctype, len(got))
	}
	res, err := c.Files.Content(ctx, "file_1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if !bytes.Equal(body, data) || res.Header.Get("content-type") != "application/octet-stream" {
		t.Fatalf("download: %d bytes", len(body))
	}
	if _, err := c.Files.Content(ctx, "file_missing"); !isNotFound(err) {
		t.Fatalf("missing: %v", err)
	}
	var ids []string
	for f, err := range c.Files.ListAll(ctx, &generated.FilesListParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.Id)
	}
	if strings.Join(ids, ",") != "file_1,file_2" {
		t.Fatalf("list %v", ids)
	}
}

func isNotFound(err error) bool {
	e, ok := AsError(err)
	return ok && e.Status == 404
}

// The SDK version follows the server's (root package.json).
func TestVersionFollowsTheServer(t *testing.T) {
	raw, err := os.ReadFile("../../../../package.json")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"version":\s*"([^"]+)"`).FindSubmatch(raw)
	if m == nil || string(m[1]) != Version {
		t.Fatalf("server version %q, SDK Version %q", m, Version)
	}
}
