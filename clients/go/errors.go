package edgemail

// Every refusal the API answers with is an *APIError carrying what the answer
// said: its status, its `error` text, its field errors, the request id, and a
// Kind; errors.Is matches it against the sentinel of its kind.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrorKind says which refusal an *APIError is.
type ErrorKind string

const (
	// KindBadRequest is 400: malformed, or a field is invalid (Fields names each).
	KindBadRequest ErrorKind = "bad_request"
	// KindUnauthorized is 401: no credential, or one unknown, revoked or expired.
	KindUnauthorized ErrorKind = "unauthorized"
	// KindForbidden is 403: the credential lacks a permission (RequiredPermission names it when the API does).
	KindForbidden ErrorKind = "forbidden"
	// KindNotFound is 404: no such resource in this project.
	KindNotFound ErrorKind = "not_found"
	// KindConflict is 409: a duplicate, or an Idempotency-Key reused with another body.
	KindConflict ErrorKind = "conflict"
	// KindPayloadTooLarge is 413: the body is larger than the route accepts.
	KindPayloadTooLarge ErrorKind = "payload_too_large"
	// KindUnprocessable is 422: well-formed but cannot be processed (a template that does not render).
	KindUnprocessable ErrorKind = "unprocessable"
	// KindRateLimited is a 429 for the request rate: wait RetryAfter and try again.
	KindRateLimited ErrorKind = "rate_limited"
	// KindPlanLimit is a 429 for the plan's hourly or daily send limit: waiting seconds does not help.
	KindPlanLimit ErrorKind = "plan_limit"
	// KindServer is 5xx: the service failed or a dependency did not answer (503 carries Retry-After).
	KindServer ErrorKind = "server"
	// KindOther is any other refused status.
	KindOther ErrorKind = "other"
)

// Sentinels for errors.Is(err, edgemail.ErrNotFound) and the like.
var (
	ErrBadRequest = errors.New("edgemail: bad request")
	// ErrValidation is ErrBadRequest under the name most code reaches for.
	ErrValidation      = ErrBadRequest
	ErrUnauthorized    = errors.New("edgemail: unauthorized")
	ErrForbidden       = errors.New("edgemail: permission denied")
	ErrNotFound        = errors.New("edgemail: not found")
	ErrConflict        = errors.New("edgemail: conflict")
	ErrPayloadTooLarge = errors.New("edgemail: payload too large")
	ErrUnprocessable   = errors.New("edgemail: unprocessable entity")
	// ErrRateLimited matches every 429, the plan limit's too.
	ErrRateLimited = errors.New("edgemail: rate limited")
	// ErrPlanLimit matches only the plan's send limit.
	ErrPlanLimit = errors.New("edgemail: plan limit reached")
	ErrServer    = errors.New("edgemail: server error")
)

var sentinels = map[ErrorKind]error{
	KindBadRequest: ErrBadRequest, KindUnauthorized: ErrUnauthorized, KindForbidden: ErrForbidden,
	KindNotFound: ErrNotFound, KindConflict: ErrConflict, KindPayloadTooLarge: ErrPayloadTooLarge,
	KindUnprocessable: ErrUnprocessable, KindRateLimited: ErrRateLimited, KindPlanLimit: ErrPlanLimit, KindServer: ErrServer,
}

// APIError is a refusal the API answered with.
type APIError struct {
	// Status is the HTTP status.
	Status int
	// Message is the answer's `error` text.
	Message string
	// Fields maps a field name to its problem, on validation failures.
	Fields map[string]string
	// RequestID is the X-Request-Id the API answered with (name it when reporting a 5xx).
	RequestID string
	// Kind says which refusal this is.
	Kind ErrorKind
	// RetryAfter is how long the API asked to wait (Retry-After): on 429 for the request rate and on 503; zero when not sent.
	RetryAfter time.Duration
	// RateLimit holds the RateLimit-Limit, -Remaining and -Reset headers, when sent.
	RateLimit *RateLimit
	// Header is the answer's headers.
	Header http.Header

	retryAfterSent bool
}

// RateLimit is the request-rate window an answer reported.
type RateLimit struct {
	Limit     int
	Remaining int
	// Reset is how long until the window ends.
	Reset time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("edgemail: %d %s", e.Status, e.Message)
}

// Is matches the sentinel of the error's kind (and ErrRateLimited for a plan-limit 429 too).
func (e *APIError) Is(target error) bool {
	return target == sentinels[e.Kind] || (target == ErrRateLimited && e.Kind == KindPlanLimit)
}

// IsPlanLimit tells the plan's send limit (waiting seconds does not help) from the request rate.
func (e *APIError) IsPlanLimit() bool { return e.Kind == KindPlanLimit }

var permissionPattern = regexp.MustCompile(`permission (\S+(?: or \S+)*) required`)

// RequiredPermission is the resource:action a 403 said is required
// ("permission emails:write required"); the first when it names alternatives; "" when it names none.
func (e *APIError) RequiredPermission() string {
	if all := e.RequiredPermissions(); len(all) > 0 {
		return all[0]
	}
	return ""
}

// RequiredPermissions is every permission that would have sufficed ("permission a:read or b:read required").
func (e *APIError) RequiredPermissions() []string {
	m := permissionPattern.FindStringSubmatch(e.Message)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], " or ")
}

// ConnectionError is a request that got no answer: the connection failed or the timeout passed.
type ConnectionError struct {
	Err error
	// Timeout is true when WithTimeout (or RequestOptions.Timeout) passed before the answer's headers arrived.
	Timeout bool
}

func (e *ConnectionError) Error() string {
	if e.Timeout {
		return "edgemail: no answer within the timeout: " + e.Err.Error()
	}
	return "edgemail: connection failed: " + e.Err.Error()
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// errorFromResponse reads a refused answer's body as the API's {error, fields}.
func errorFromResponse(resp *http.Response) *APIError {
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &APIError{Status: resp.StatusCode, Header: resp.Header, RequestID: resp.Header.Get("X-Request-Id")}
	var body struct {
		Error  *string           `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	if json.Unmarshal(text, &body) == nil && body.Error != nil {
		e.Message, e.Fields = *body.Error, body.Fields
	} else if len(text) > 0 {
		e.Message = string(text)
	} else {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if e.Fields == nil {
		e.Fields = map[string]string{}
	}
	e.RetryAfter, e.retryAfterSent = parseRetryAfter(resp.Header.Get("Retry-After"))
	if limit, err := strconv.Atoi(resp.Header.Get("RateLimit-Limit")); err == nil {
		remaining, _ := strconv.Atoi(resp.Header.Get("RateLimit-Remaining"))
		reset, _ := strconv.Atoi(resp.Header.Get("RateLimit-Reset"))
		e.RateLimit = &RateLimit{Limit: limit, Remaining: remaining, Reset: time.Duration(reset) * time.Second}
	}
	switch s := resp.StatusCode; {
	case s == 400:
		e.Kind = KindBadRequest
	case s == 401:
		e.Kind = KindUnauthorized
	case s == 403:
		e.Kind = KindForbidden
	case s == 404:
		e.Kind = KindNotFound
	case s == 409:
		e.Kind = KindConflict
	case s == 413:
		e.Kind = KindPayloadTooLarge
	case s == 422:
		e.Kind = KindUnprocessable
	case s == 429:
		// A request-rate refusal always says when to retry; a plan limit is a send refused for the hour or day.
		e.Kind = KindRateLimited
		if !e.retryAfterSent && strings.Contains(e.Message, " email limit reached ") {
			e.Kind = KindPlanLimit
		}
	case s >= 500:
		e.Kind = KindServer
	default:
		e.Kind = KindOther
	}
	return e
}

// parseRetryAfter reads delta-seconds or an HTTP date.
func parseRetryAfter(value string) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if seconds, err := strconv.ParseFloat(value, 64); err == nil {
		if seconds < 0 {
			seconds = 0
		}
		return time.Duration(seconds * float64(time.Second)), true
	}
	if at, err := http.ParseTime(value); err == nil {
		if d := time.Until(at); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}
