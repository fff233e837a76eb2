package edgemail

// Checks that a webhook request came from the service: the HMAC-SHA256 under
// the webhook's secret of "<X-Service-Timestamp>.<raw body>", sent as
// "X-Service-Signature: sha256=<hex>", with a timestamp near now (a replay of
// an old request is refused). docs/webhooks.md describes the scheme.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far X-Service-Timestamp may be from now when VerifyWebhook is given 0.
const DefaultWebhookTolerance = 5 * time.Minute

// WebhookEvent is the envelope every delivery carries.
type WebhookEvent struct {
	// Event is the type: inbound.received, email.sent, email.failed, email.bounced, email.complained.
	Event string `json:"event"`
	// Timestamp is when the event happened (the same on every attempt).
	Timestamp string `json:"timestamp"`
	// Data is the event's record; decode it into the type Event names (an InboundEmail for inbound.received).
	Data json.RawMessage `json:"data"`
}

// WebhookVerificationError says why a request is not a genuine, fresh delivery.
type WebhookVerificationError struct {
	Reason string
}

func (e *WebhookVerificationError) Error() string {
	return "edgemail: webhook not verified: " + e.Reason
}

var (
	timestampPattern = regexp.MustCompile(`^[0-9]+$`)
	signaturePattern = regexp.MustCompile(`^(?i:sha256)=([0-9a-fA-F]{64})$`)
)

// VerifyWebhook checks a delivery: payload is the request body exactly as
// received (never re-encoded JSON), header the request's headers, secret the
// webhook's whsec_... secret, tolerance how far the timestamp may be from now
// (0 for DefaultWebhookTolerance). It answers the parsed envelope, or a
// *WebhookVerificationError. The comparison is constant-time (hmac.Equal).
func VerifyWebhook(payload []byte, header http.Header, secret string, tolerance time.Duration) (*WebhookEvent, error) {
	return VerifyWebhookAt(payload, header, secret, tolerance, time.Now())
}

// VerifyWebhookAt is VerifyWebhook with the clock given (for tests).
func VerifyWebhookAt(payload []byte, header http.Header, secret string, tolerance time.Duration, now time.Time) (*WebhookEvent, error) {
	timestamp := strings.TrimSpace(header.Get("X-Service-Timestamp"))
	if !timestampPattern.MatchString(timestamp) {
		return nil, &WebhookVerificationError{Reason: "missing or malformed X-Service-Timestamp"}
	}
	m := signaturePattern.FindStringSubmatch(strings.TrimSpace(header.Get("X-Service-Signature")))
	if m == nil {
		return nil, &WebhookVerificationError{Reason: "missing or malformed X-Service-Signature"}
	}
	given, _ := hex.DecodeString(m[1])
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	sent, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return nil, &WebhookVerificationError{Reason: "missing or malformed X-Service-Timestamp"}
	}
	if skew := now.Sub(time.Unix(sent, 0)); skew > tolerance || -skew > tolerance {
		return nil, &WebhookVerificationError{Reason: "timestamp outside the tolerance"}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(payload)
	if !hmac.Equal(mac.Sum(nil), given) {
		return nil, &WebhookVerificationError{Reason: "signature does not match"}
	}
	var event WebhookEvent
	if err := json.Unmarshal(payload, &event); err != nil {
		return nil, &WebhookVerificationError{Reason: "the body is not the JSON envelope: " + err.Error()}
	}
	return &event, nil
}
