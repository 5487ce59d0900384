package mango

import (
	"context"
	"fmt"
	"io"
	"iter"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// Multipart is a multipart/form-data body for the upload operations (Files.Upload, Skills.Create, …).
// Parts are written in order while the request is sent, so a large file streams instead of being
// buffered; an upload is therefore not retried once its body has started.
//
//	f, _ := os.Open("report.pdf")
//	file, err := c.Files.Upload(ctx, mango.NewMultipart().File("file", "report.pdf", "application/pdf", f))
type Multipart struct {
	parts    []func(*multipart.Writer) error
	boundary string
}

// NewMultipart returns an empty form.
func NewMultipart() *Multipart {
	return &Multipart{boundary: multipart.NewWriter(io.Discard).Boundary()}
}

// File adds a file part; contentType "" is sent as application/octet-stream.
func (m *Multipart) File(field, filename, contentType string, r io.Reader) *Multipart {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	m.parts = append(m.parts, func(w *multipart.Writer) error {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, escapeQuotes(field), escapeQuotes(filename)))
		h.Set("Content-Type", contentType)
		part, err := w.CreatePart(h)
		if err != nil {
			return err
		}
		_, err = io.Copy(part, r)
		return err
	})
	return m
}

// Field adds a text field.
func (m *Multipart) Field(name, value string) *Multipart {
	m.parts = append(m.parts, func(w *multipart.Writer) error { return w.WriteField(name, value) })
	return m
}

// ContentType is the multipart/form-data content type with this form's boundary.
func (m *Multipart) ContentType() string { return "multipart/form-data; boundary=" + m.boundary }

// Reader streams the encoded form (each call starts a new encoding of the same parts).
func (m *Multipart) Reader() io.Reader {
	pr, pw := io.Pipe()
	go func() {
		w := multipart.NewWriter(pw)
		if err := w.SetBoundary(m.boundary); err != nil {
			pw.CloseWithError(err)
			return
		}
		for _, part := range m.parts {
			if err := part(w); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Close())
	}()
	return pr
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }

type streamingKey struct{}

// streaming marks a request whose response body the caller reads (a binary download): the retrying
// transport then bounds only the wait for headers and does not buffer the body.
func streaming(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamingKey{}, true)
}

func isStreaming(ctx context.Context) bool { v, _ := ctx.Value(streamingKey{}).(bool); return v }

// cancelOnClose releases a streamed response's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// onceStreaming is retryDoer.once for a streamed response: the timeout covers the headers only.
func (d *retryDoer) onceStreaming(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	timer := time.AfterFunc(d.c.timeout, cancel)
	res, err := d.c.httpClient.Do(req.WithContext(ctx))
	timer.Stop()
	if err != nil {
		cancel()
		return nil, err
	}
	res.Body = &cancelOnClose{ReadCloser: res.Body, cancel: cancel}
	return res, nil
}

// checkStream turns a non-2xx streamed response into *Error (reading and closing its body).
func checkStream(res *http.Response, err error) (*http.Response, error) {
	if err != nil {
		return nil, err
	}
	if res.StatusCode < 200 || res.StatusCode >= 300 {
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return nil, ErrorFromResponse(res.StatusCode, res.Header, body)
	}
	return res, nil
}

// allFrom is All starting at page start (nil: the first page).
func allFrom[T any](ctx context.Context, start *string, fetch PageFetcher) iter.Seq2[T, error] {
	first := true
	return All[T](ctx, func(ctx context.Context, page *string) (*http.Response, error) {
		if first {
			first = false
			page = start
		}
		return fetch(ctx, page)
	})
}
