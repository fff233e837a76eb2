package edgemail_test

// What needs no stack: a server that never answers (the timeout, the caller's
// context) and a base URL left out.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	edgemail "github.com/edgemail/edgemail/clients/go"
)

func TestTimeoutAndCancel(t *testing.T) {
	var calls atomic.Int32
	hang := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer server.Close()
	defer close(hang)

	// A GET is retried after a timeout; each attempt waits WithTimeout for the answer's headers.
	c := edgemail.New("myk_x", edgemail.WithBaseURL(server.URL), edgemail.WithTimeout(200*time.Millisecond), edgemail.WithMaxRetries(1))
	started := time.Now()
	_, err := c.Domains.List(context.Background())
	var connErr *edgemail.ConnectionError
	if !errors.As(err, &connErr) || !connErr.Timeout || calls.Load() != 2 {
		t.Fatalf("want a timed-out *ConnectionError after 2 attempts, got %v after %d", err, calls.Load())
	}
	if elapsed := time.Since(started); elapsed < 400*time.Millisecond || elapsed > 5*time.Second {
		t.Fatalf("two 200ms attempts and a backoff took %v", elapsed)
	}

	// The caller's context ends the call, retries included, and is what comes back.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = edgemail.New("myk_x", edgemail.WithBaseURL(server.URL)).Domains.List(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want context.DeadlineExceeded, got %v", err)
	}

	if _, err := edgemail.New("myk_x").Domains.List(context.Background()); err == nil {
		t.Fatal("a client without a base URL made a request")
	}
}
