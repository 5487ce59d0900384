// Package mango is the hand-written layer over the generated Mango API client (package generated, made
// by tools/sdk/generate.sh from openapi.yaml). It adds what the contract cannot express: Bearer auth,
// retries with backoff, typed errors carrying the error envelope, auto-pagination over next_page, the
// Session event stream (SSE) with Last-Event-ID resume, and Work secret decoding.
//
//	c, _ := mango.New("http://localhost:8080", os.Getenv("MANGO_API_KEY"))
//	agent, err := mango.Decode[generated.Agent](c.AgentsCreate(ctx, generated.AgentCreateRequest{Name: "coder", Model: model}))
//	for a, err := range mango.All[generated.Agent](ctx, func(ctx context.Context, page *string) (*http.Response, error) {
//		return c.AgentsList(ctx, &generated.AgentsListParams{Page: page})
//	}) { ... }
package mango

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"mango.dev/sdk/generated"
)

// Version of this SDK, sent in the User-Agent header.
const Version = "0.1.0"

const (
	// DefaultMaxRetries is how many times a retryable failure (connection error, 408, 429, 5xx) is retried.
	DefaultMaxRetries = 2
	// DefaultTimeout bounds one attempt (headers and body) of a non-streaming request.
	DefaultTimeout = 60 * time.Second
)

// Client is the generated client (every operation of openapi.yaml, returning *http.Response) configured
// with the base URL, the credential and the retrying transport. Pass its results to Decode.
type Client struct {
	*generated.Client
	// Resources groups every operation by its operationId: c.Files.Upload, c.Environments.Work.Poll, …
	// (generated into resources.gen.go). Each method decodes the result and returns *Error for non-2xx.
	Resources
	baseURL    string
	apiKey     string
	httpClient *http.Client
	maxRetries int
	timeout    time.Duration
	headers    http.Header
	sleep      func(context.Context, time.Duration) error
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the underlying *http.Client (its Timeout is ignored; see WithTimeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.httpClient = h } }

// WithMaxRetries sets how many times a retryable failure is retried (0 disables retries).
func WithMaxRetries(n int) Option { return func(c *Client) { c.maxRetries = n } }

// WithTimeout sets the per-attempt timeout of non-streaming requests.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithHeader adds a header to every request (Authorization cannot be overridden).
func WithHeader(name, value string) Option { return func(c *Client) { c.headers.Add(name, value) } }

// New returns a client for baseURL (the server origin without /v1, e.g. http://localhost:8080) that
// authenticates with apiKey: a Workspace API key, an Environment key or a Work token.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mango: baseURL must be an http:// or https:// URL, got %q", baseURL)
	}
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("mango: apiKey is required")
	}
	c := &Client{
		baseURL:    strings.TrimRight(baseURL, "/"),
		apiKey:     apiKey,
		httpClient: &http.Client{},
		maxRetries: DefaultMaxRetries,
		timeout:    DefaultTimeout,
		headers:    http.Header{},
		sleep:      sleepContext,
	}
	for _, opt := range opts {
		opt(c)
	}
	if c.maxRetries < 0 {
		return nil, errors.New("mango: maxRetries must not be negative")
	}
	if c.timeout <= 0 {
		return nil, errors.New("mango: timeout must be positive")
	}
	gen, err := generated.NewClient(c.baseURL, generated.WithHTTPClient(&retryDoer{c: c}),
		generated.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			c.authorize(req, "application/json")
			return nil
		}))
	if err != nil {
		return nil, err
	}
	c.Client = gen
	c.Resources = newResources(c)
	return c, nil
}

// BaseURL is the normalized base URL (no trailing slash).
func (c *Client) BaseURL() string { return c.baseURL }

// WithToken returns a client with the same settings bound to another credential and, when baseURL is
// not empty, another base URL — e.g. the Work token and api_base_url of a decoded Work secret. Options
// apply after the copied settings (e.g. WithMaxRetries(0) for a caller that retries itself).
func (c *Client) WithToken(token, baseURL string, opts ...Option) (*Client, error) {
	if baseURL == "" {
		baseURL = c.baseURL
	}
	base := []Option{WithHTTPClient(c.httpClient), WithMaxRetries(c.maxRetries), WithTimeout(c.timeout)}
	for name, values := range c.headers {
		for _, v := range values {
			base = append(base, WithHeader(name, v))
		}
	}
	return New(baseURL, token, append(base, opts...)...)
}

func (c *Client) authorize(req *http.Request, accept string) {
	for name, values := range c.headers {
		req.Header[http.CanonicalHeaderKey(name)] = append([]string(nil), values...)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("User-Agent", "mango-sdk-go/"+Version)
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
}
