package edgemail

// The one place requests are made: URL and headers, the timeout, retries with
// backoff and jitter where a retry is safe, and the mapping of refusals to
// *APIError. Generated service methods describe a request and call here.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand"
	"net/http"
	"net/url"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

type transport struct {
	credential string
	cfg        config
}

func newTransport(credential string, opts []Option) *transport {
	cfg := config{timeout: 60 * time.Second, maxRetries: 2, maxRetryAfter: 60 * time.Second, header: http.Header{}}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.httpClient == nil {
		cfg.httpClient = http.DefaultClient
	}
	return &transport{credential: credential, cfg: cfg}
}

// request is what a generated method asks for.
type request struct {
	method string
	path   string
	// query is a generated *...Params struct (fields tagged `query:"name"`), or nil.
	query any
	// values, when set, is the query already encoded (the pages after the first).
	values url.Values
	body   any
	// idempotencyKey: the route takes an Idempotency-Key (sends); one is always sent, which makes retrying it safe.
	idempotencyKey bool
	opts           []*RequestOptions
}

// merged folds the call's RequestOptions, later ones winning field by field.
func (r *request) merged() RequestOptions {
	var m RequestOptions
	for _, o := range r.opts {
		if o == nil {
			continue
		}
		if o.IdempotencyKey != "" {
			m.IdempotencyKey = o.IdempotencyKey
		}
		if o.Timeout != 0 {
			m.Timeout = o.Timeout
		}
		if o.MaxRetries != nil {
			m.MaxRetries = o.MaxRetries
		}
		for name, values := range o.Header {
			for _, v := range values {
				if m.Header == nil {
					m.Header = http.Header{}
				}
				m.Header.Add(name, v)
			}
		}
	}
	return m
}

var retryStatuses = map[int]bool{429: true, 500: true, 502: true, 503: true, 504: true}

// Methods whose repetition has the effect of one call (POST and PATCH are not among them).
var idempotentMethods = map[string]bool{"GET": true, "HEAD": true, "PUT": true, "DELETE": true}

// send makes the request, retrying where safe, and answers a 2xx response or
// the error. The caller reads the body and then calls done, which releases
// the attempt's context.
func (t *transport) send(ctx context.Context, r *request, accept string) (resp *http.Response, done func(), err error) {
	if t.cfg.baseURL == "" {
		return nil, nil, errors.New("edgemail: no base URL: pass edgemail.WithBaseURL(...) to New")
	}
	o := r.merged()
	target := t.cfg.baseURL + r.path
	values := r.values
	if values == nil {
		if values, err = encodeQuery(r.query); err != nil {
			return nil, nil, err
		}
	}
	if len(values) > 0 {
		target += "?" + values.Encode()
	}
	var payload []byte
	if !isNil(r.body) {
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, nil, fmt.Errorf("edgemail: encoding the request body: %w", err)
		}
	}
	header := http.Header{}
	header.Set("Authorization", "Bearer "+t.credential)
	header.Set("User-Agent", "edgemail-go/"+Version)
	header.Set("Accept", accept)
	if payload != nil {
		header.Set("Content-Type", "application/json")
	}
	for _, h := range []http.Header{t.cfg.header, o.Header} {
		for name, vs := range h {
			header.Del(name)
			for _, v := range vs {
				header.Add(name, v)
			}
		}
	}
	if o.IdempotencyKey != "" {
		header.Set("Idempotency-Key", o.IdempotencyKey)
	} else if r.idempotencyKey {
		header.Set("Idempotency-Key", newUUID())
	}
	retrySafe := idempotentMethods[r.method] || header.Get("Idempotency-Key") != ""
	maxRetries := t.cfg.maxRetries
	if o.MaxRetries != nil {
		maxRetries = *o.MaxRetries
	}
	if !retrySafe {
		maxRetries = 0
	}
	timeout := t.cfg.timeout
	if o.Timeout != 0 {
		timeout = o.Timeout
	}

	for attempt := 0; ; attempt++ {
		resp, done, failure := t.attempt(ctx, r.method, target, header, payload, timeout)
		if failure == nil {
			return resp, done, nil
		}
		var apiErr *APIError
		if errors.As(failure, &apiErr) && (!retryStatuses[apiErr.Status] || apiErr.Kind == KindPlanLimit) {
			return nil, nil, failure
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if attempt >= maxRetries {
			return nil, nil, failure
		}
		wait := backoff(attempt)
		if apiErr != nil && apiErr.retryAfterSent {
			if apiErr.RetryAfter > t.cfg.maxRetryAfter {
				return nil, nil, failure
			}
			wait = apiErr.RetryAfter
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// attempt is one try: a 2xx response (with the function releasing it), or the error.
func (t *transport) attempt(ctx context.Context, method, target string, header http.Header, payload []byte, timeout time.Duration) (*http.Response, func(), error) {
	actx, cancel := context.WithCancel(ctx)
	// The timeout covers the wait for the answer's headers only, so a streamed body is not cut short.
	var timedOut atomic.Bool
	timer := time.AfterFunc(timeout, func() { timedOut.Store(true); cancel() })
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, target, body)
	if err != nil {
		timer.Stop()
		cancel()
		return nil, nil, fmt.Errorf("edgemail: %w", err)
	}
	req.Header = header.Clone()
	resp, err := t.cfg.httpClient.Do(req)
	timer.Stop()
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, &ConnectionError{Err: err, Timeout: timedOut.Load()}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, func() { resp.Body.Close(); cancel() }, nil
	}
	apiErr := errorFromResponse(resp)
	resp.Body.Close()
	cancel()
	return nil, nil, apiErr
}

// doJSON decodes a 2xx JSON answer into out (nil discards it).
func (t *transport) doJSON(ctx context.Context, r *request, out any) error {
	resp, done, err := t.send(ctx, r, "application/json")
	if err != nil {
		return err
	}
	defer done()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("edgemail: decoding the answer of %s %s: %w", r.method, r.path, err)
	}
	return nil
}

// doBytes reads a 2xx answer whole (a page of a list).
func (t *transport) doBytes(ctx context.Context, r *request) ([]byte, error) {
	resp, done, err := t.send(ctx, r, "application/json")
	if err != nil {
		return nil, err
	}
	defer done()
	return io.ReadAll(resp.Body)
}

func (t *transport) doEmpty(ctx context.Context, r *request) error {
	return t.doJSON(ctx, r, nil)
}

// doStream hands over the answer's body as it arrives, never buffered whole
// (a raw message may be 25 MB). Closing it releases the connection.
func (t *transport) doStream(ctx context.Context, r *request) (io.ReadCloser, error) {
	resp, done, err := t.send(ctx, r, "*/*")
	if err != nil {
		return nil, err
	}
	return &stream{ReadCloser: resp.Body, done: done}, nil
}

type stream struct {
	io.ReadCloser
	done func()
	once sync.Once
}

func (s *stream) Close() error {
	err := s.ReadCloser.Close()
	s.once.Do(s.done)
	return err
}

// backoff is exponential from half a second, capped at 8s, with up to 25% jitter below it.
func backoff(attempt int) time.Duration {
	base := math.Min(8000, 500*math.Pow(2, float64(attempt)))
	jitterMu.Lock()
	j := jitter.Float64()
	jitterMu.Unlock()
	return time.Duration(base*(1-j*0.25)) * time.Millisecond
}

var (
	jitterMu sync.Mutex
	jitter   = mathrand.New(mathrand.NewSource(time.Now().UnixNano()))
)

// newUUID is a random (version 4) UUID, the Idempotency-Key a send gets when the caller gives none.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("edgemail: no randomness for an Idempotency-Key: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
