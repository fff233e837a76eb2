package edgemail

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// Client is the project API, used with a project key (myk_...). Its fields are
// the API's resources: c.Emails, c.InboundEmails, c.Webhooks, ...
type Client struct {
	apiServices
	t *transport
}

// New makes a client of the project API. WithBaseURL is required: it names
// where the API is served (the /api/v1/... paths are appended to it).
func New(apiKey string, opts ...Option) *Client {
	c := &Client{t: newTransport(apiKey, opts)}
	c.apiServices.init(c.t)
	return c
}

// AdminClient is the platform operator's API under /api/v1/admin, used with a
// platform credential (mya_...).
type AdminClient struct {
	adminServices
	t *transport
}

// NewAdmin makes a client of the admin API with a platform credential.
func NewAdmin(platformCredential string, opts ...Option) *AdminClient {
	c := &AdminClient{t: newTransport(platformCredential, opts)}
	c.adminServices.init(c.t)
	return c
}

// Do makes any request by hand (a route newer than this client): body, when
// not nil, is sent as JSON; a 2xx JSON answer is decoded into out (nil
// discards it). Refusals are *APIError as for every other method.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, opts ...*RequestOptions) error {
	return c.t.doJSON(ctx, &request{method: strings.ToUpper(method), path: path, body: body, opts: opts}, out)
}

// Do is Client.Do for the admin client.
func (c *AdminClient) Do(ctx context.Context, method, path string, body, out any, opts ...*RequestOptions) error {
	return c.t.doJSON(ctx, &request{method: strings.ToUpper(method), path: path, body: body, opts: opts}, out)
}

// Option configures a client made by New or NewAdmin.
type Option func(*config)

type config struct {
	baseURL       string
	httpClient    *http.Client
	timeout       time.Duration
	maxRetries    int
	maxRetryAfter time.Duration
	header        http.Header
}

// WithBaseURL names where the API is served, e.g. https://mail.example.com.
func WithBaseURL(baseURL string) Option {
	return func(c *config) { c.baseURL = strings.TrimRight(baseURL, "/") }
}

// WithHTTPClient makes the requests with an *http.Client of your own (a proxy,
// instrumentation). Leave its Timeout zero: it would cut long downloads short;
// WithTimeout bounds the wait for each answer instead.
func WithHTTPClient(client *http.Client) Option {
	return func(c *config) { c.httpClient = client }
}

// WithRoundTripper makes the requests through rt (a test double, a proxy's transport).
func WithRoundTripper(rt http.RoundTripper) Option {
	return func(c *config) { c.httpClient = &http.Client{Transport: rt} }
}

// WithTimeout bounds how long one attempt waits for its answer's headers
// (default 60s); a streamed body then takes as long as it takes. The context
// passed to each call bounds the whole call, retries included.
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// WithMaxRetries sets how many times a call is retried where a retry is safe (default 2).
func WithMaxRetries(n int) Option {
	return func(c *config) { c.maxRetries = n }
}

// WithMaxRetryAfter sets the longest Retry-After the client waits out by
// itself (default 60s); a refusal asking for longer is returned at once.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(c *config) { c.maxRetryAfter = d }
}

// WithHeader adds a header to every request.
func WithHeader(name, value string) Option {
	return func(c *config) { c.header.Add(name, value) }
}

// WithProjectID makes a platform credential act in one project (the
// X-Service-Project-Id header), e.g. to call the project API with New.
func WithProjectID(projectID string) Option {
	return WithHeader("X-Service-Project-Id", projectID)
}

// RequestOptions adjust one call; pass nil or leave them out for the client's settings.
type RequestOptions struct {
	// IdempotencyKey is sent as Idempotency-Key. A send makes one when it is
	// empty, so the client's own retries send once; give your own to make a
	// retry of the whole call (after a crash, say) safe too.
	IdempotencyKey string

	// Timeout replaces WithTimeout for this call.
	Timeout time.Duration

	// MaxRetries replaces WithMaxRetries for this call (edgemail.Ptr(0) for none).
	MaxRetries *int

	// Header is added to this call's request.
	Header http.Header
}
