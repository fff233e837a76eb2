package edgemail_test

// The Go client against the real local stack (issue 28). test/client-go.test.ts
// starts the stacks, makes the tenants, keys and rows, and runs `go test ./...`
// here with EDGEMAIL_TEST_* variables; without them these tests skip.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	edgemail "github.com/edgemail/edgemail/clients/go"
)

type stackEnv struct {
	baseURL, admin, keyAll, keyReader, keyWebhooksRead string
	nodeToken, inboundDomain, sendDomain               string
	pagingKey, pagingProjectID                         string
	pagingIDs                                          []string
	planKey, planDomain                                string
	limitedURL, limitedKey, controlURL                 string
	perMinute                                          int
}

// stack reads what test/client-go.test.ts passed, or skips.
func stack(t *testing.T) *stackEnv {
	t.Helper()
	get := func(name string) string { return os.Getenv("EDGEMAIL_TEST_" + name) }
	if get("BASE_URL") == "" {
		t.Skip("EDGEMAIL_TEST_BASE_URL is not set: run through test/client-go.test.ts, which starts the stack")
	}
	ids, err := os.ReadFile(get("PAGING_IDS_FILE"))
	if err != nil {
		t.Fatalf("reading the paging ids: %v", err)
	}
	perMinute, _ := strconv.Atoi(get("PER_MINUTE"))
	return &stackEnv{
		baseURL: get("BASE_URL"), admin: get("ADMIN"), keyAll: get("KEY_ALL"), keyReader: get("KEY_READER"), keyWebhooksRead: get("KEY_WEBHOOKS_READ"),
		nodeToken: get("NODE_TOKEN"), inboundDomain: get("INBOUND_DOMAIN"), sendDomain: get("SEND_DOMAIN"),
		pagingKey: get("PAGING_KEY"), pagingProjectID: get("PAGING_PROJECT_ID"), pagingIDs: strings.Fields(string(ids)),
		planKey: get("PLAN_KEY"), planDomain: get("PLAN_DOMAIN"),
		limitedURL: get("LIMITED_BASE_URL"), limitedKey: get("LIMITED_KEY"), controlURL: get("CONTROL_URL"),
		perMinute: perMinute,
	}
}

func (e *stackEnv) client(key string, opts ...edgemail.Option) *edgemail.Client {
	return edgemail.New(key, append([]edgemail.Option{edgemail.WithBaseURL(e.baseURL)}, opts...)...)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// recorder passes requests to the real transport and keeps what was sent and
// when; drop loses that many answers after the server got the request, as a
// connection reset would.
type recorder struct {
	mu         sync.Mutex
	drop       int
	headers    []http.Header
	at         []time.Time
	retryAfter []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	r.at = append(r.at, time.Now())
	r.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retryAfter = append(r.retryAfter, resp.Header.Get("Retry-After"))
	if r.drop > 0 {
		r.drop--
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("read: connection reset by peer (the test lost the answer)")
	}
	return resp, nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}

// apiError is the *APIError err holds, or fails the test.
func apiError(t *testing.T, err error) *edgemail.APIError {
	t.Helper()
	var apiErr *edgemail.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("want an *edgemail.APIError, got %T %v", err, err)
	}
	return apiErr
}

func random() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }

// forward hands a message to the platform as a relay node does (POST /relay/v1/inbound) and answers the record's id.
func (e *stackEnv) forward(t *testing.T, raw []byte) string {
	t.Helper()
	meta := map[string]any{
		"spool_id":    fmt.Sprintf("%016x-%012s", time.Now().UnixMilli(), random()),
		"received_at": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"client_ip":   "203.0.113.9", "helo": "mail.example.org", "mail_from": "ann@example.org",
		"rcpt_to": []string{"support@" + e.inboundDomain}, "size": len(raw),
		"auth":         map[string]any{"spf": "pass", "dkim": "pass", "dmarc": "pass", "aligned": true, "client_ip": "203.0.113.9"},
		"dmarc_policy": "none", "smtp_rejected": false,
		"parsed": map[string]any{
			"ok": true, "error": nil, "message_id": "<go@example.org>", "subject": "Hello", "text": "Hi there", "html": "<p>Hi there</p>",
			"headers": map[string]any{"from": "Ann <ann@example.org>", "subject": "Hello"}, "attachments": []any{},
		},
	}
	metaBytes, _ := json.Marshal(meta)
	req, _ := http.NewRequest("POST", e.baseURL+"/relay/v1/inbound", bytes.NewReader(append(metaBytes, raw...)))
	req.Header.Set("Authorization", "Bearer "+e.nodeToken)
	req.Header.Set("Content-Type", "application/vnd.edgemail.inbound")
	req.Header.Set("Edgemail-Meta-Length", strconv.Itoa(len(metaBytes)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("forwarding: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		InboundEmails []struct {
			ID string `json:"id"`
		} `json:"inbound_emails"`
	}
	text, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(text, &body) != nil || len(body.InboundEmails) != 1 {
		t.Fatalf("forwarding answered %d %s", resp.StatusCode, text)
	}
	return body.InboundEmails[0].ID
}

func keys(t *testing.T, e *stackEnv) {
	ctx := ctxFor(t, 30*time.Second)
	rec := &recorder{}
	c := e.client(e.keyAll, edgemail.WithRoundTripper(rec))
	created, err := c.APIKeys.Create(ctx, &edgemail.CreateAPIKey{Name: "from-go", Permissions: []string{"domains:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Token, "myk_") {
		t.Fatalf("token %q", created.Token)
	}
	list, err := c.APIKeys.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, k := range list.APIKeys {
		found = found || k.ID == created.APIKey.ID
	}
	if !found {
		t.Fatalf("the new key %s is not listed", created.APIKey.ID)
	}
	fresh := e.client(created.Token)
	domains, err := fresh.Domains.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, d := range domains.Domains {
		names = append(names, d.Name)
	}
	if !strings.Contains(strings.Join(names, " "), e.sendDomain) {
		t.Fatalf("domains %v lack %s", names, e.sendDomain)
	}
	if _, err := c.APIKeys.Revoke(ctx, created.APIKey.ID); err != nil {
		t.Fatal(err)
	}
	_, err = fresh.Domains.List(ctx)
	if apiErr := apiError(t, err); apiErr.Status != 401 || apiErr.Kind != edgemail.KindUnauthorized || !errors.Is(err, edgemail.ErrUnauthorized) {
		t.Fatalf("a revoked key: %+v", apiErr)
	}
	for _, h := range rec.headers {
		if h.Get("User-Agent") != "edgemail-go/"+edgemail.Version || h.Get("Authorization") != "Bearer "+e.keyAll {
			t.Fatalf("sent User-Agent %q, Authorization %q", h.Get("User-Agent"), h.Get("Authorization"))
		}
	}

	// The admin client takes the platform credential; a project key is refused there.
	admin := edgemail.NewAdmin(e.admin, edgemail.WithBaseURL(e.baseURL))
	user, err := admin.Users.Create(ctx, &edgemail.CreateUser{Email: "ops-" + random() + "@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	users, err := admin.Users.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found = false
	for _, u := range users.Users {
		found = found || u.ID == user.User.ID
	}
	if !found {
		t.Fatal("the new user is not listed")
	}
	_, err = edgemail.NewAdmin(e.keyAll, edgemail.WithBaseURL(e.baseURL)).Users.List(ctx)
	if s := apiError(t, err).Status; s != 401 && s != 403 {
		t.Fatalf("a project key on the admin API: %d", s)
	}
}

func (e *stackEnv) message(to, subject string) *edgemail.SendEmail {
	return &edgemail.SendEmail{From: "news@" + e.sendDomain, To: edgemail.StringList{to}, Subject: edgemail.String(subject), Text: edgemail.String("hello")}
}

// sentTo counts the project's sends to one recipient, through the client's own list.
func sentTo(t *testing.T, ctx context.Context, c *edgemail.Client, recipient string) int {
	t.Helper()
	all, err := c.Emails.List(ctx, &edgemail.EmailsListParams{Recipient: recipient}).All()
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func sendIdempotency(t *testing.T, e *stackEnv) {
	ctx := ctxFor(t, 30*time.Second)
	rec := &recorder{}
	c := e.client(e.keyAll, edgemail.WithRoundTripper(rec))
	first, err := c.Emails.Send(ctx, e.message("auto-"+random()+"@example.org", "auto key"))
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Emails) != 1 || !uuidPattern.MatchString(rec.headers[0].Get("Idempotency-Key")) {
		t.Fatalf("emails %d, Idempotency-Key %q", len(first.Emails), rec.headers[0].Get("Idempotency-Key"))
	}

	key := "order-" + random()
	to := "given-" + random() + "@example.org"
	a, err := c.Emails.Send(ctx, e.message(to, "given key"), &edgemail.RequestOptions{IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Emails.Send(ctx, e.message(to, "given key"), &edgemail.RequestOptions{IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if rec.headers[1].Get("Idempotency-Key") != key || a.Emails[0].ID != b.Emails[0].ID {
		t.Fatalf("sent key %q; ids %s and %s", rec.headers[1].Get("Idempotency-Key"), a.Emails[0].ID, b.Emails[0].ID)
	}
	if n := sentTo(t, ctx, c, to); n != 1 {
		t.Fatalf("%d sends to %s, want 1", n, to)
	}

	other := "other-" + random() + "@example.org"
	_, err = c.Emails.Send(ctx, e.message(other, "another body"), &edgemail.RequestOptions{IdempotencyKey: key})
	if apiErr := apiError(t, err); apiErr.Status != 409 || !errors.Is(err, edgemail.ErrConflict) {
		t.Fatalf("a key reused with another body: %+v", apiErr)
	}
	if n := sentTo(t, ctx, c, other); n != 0 {
		t.Fatalf("%d sends to %s, want none", n, other)
	}
}

func lostAnswer(t *testing.T, e *stackEnv) {
	ctx := ctxFor(t, 30*time.Second)
	rec := &recorder{drop: 1}
	to := "lost-" + random() + "@example.org"
	sent, err := e.client(e.keyAll, edgemail.WithRoundTripper(rec)).Emails.Send(ctx, e.message(to, "lost answer"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.count() != 2 || rec.headers[1].Get("Idempotency-Key") != rec.headers[0].Get("Idempotency-Key") || len(sent.Emails) != 1 {
		t.Fatalf("attempts %d, keys %q and %q", rec.count(), rec.headers[0].Get("Idempotency-Key"), rec.headers[len(rec.headers)-1].Get("Idempotency-Key"))
	}
	if n := sentTo(t, ctx, e.client(e.keyAll), to); n != 1 {
		t.Fatalf("%d sends to %s after a retried send, want 1", n, to)
	}

	// A POST without an Idempotency-Key is not retried: the connection error comes back.
	once := &recorder{drop: 1}
	_, err = e.client(e.keyAll, edgemail.WithRoundTripper(once)).APIKeys.Create(ctx, &edgemail.CreateAPIKey{Name: "not retried"})
	var connErr *edgemail.ConnectionError
	if !errors.As(err, &connErr) || once.count() != 1 {
		t.Fatalf("a keyless POST whose answer was lost: %v after %d attempts", err, once.count())
	}
}

func paging(t *testing.T, e *stackEnv) {
	ctx := ctxFor(t, 30*time.Second)
	c := e.client(e.pagingKey)
	if len(e.pagingIDs) < 120 {
		t.Fatalf("only %d rows to page over", len(e.pagingIDs))
	}
	var seen []string
	it := c.InboundEmails.List(ctx, &edgemail.InboundEmailsListParams{Status: "received"})
	for it.Next() {
		seen = append(seen, it.Value().ID)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, " ") != strings.Join(e.pagingIDs, " ") {
		t.Fatalf("walked %d ids, want the %d newest first", len(seen), len(e.pagingIDs))
	}

	var sizes []int
	pages := c.InboundEmails.List(ctx, &edgemail.InboundEmailsListParams{Status: "received", Limit: 50})
	for pages.NextPage() {
		sizes = append(sizes, len(pages.Page().InboundEmails))
	}
	if pages.Err() != nil || fmt.Sprint(sizes) != fmt.Sprint([]int{50, 50, len(e.pagingIDs) - 100}) {
		t.Fatalf("pages %v (%v)", sizes, pages.Err())
	}
	first := c.InboundEmails.List(ctx, &edgemail.InboundEmailsListParams{Limit: 5})
	if !first.NextPage() || len(first.Page().InboundEmails) != 5 || first.Page().Next == nil {
		t.Fatalf("the first page of 5: %+v (%v)", first.Page(), first.Err())
	}

	// The audit log pages by offset to the same events as one large page.
	one := c.AuditLog.List(ctx, &edgemail.AuditLogListParams{Limit: 200})
	if !one.NextPage() {
		t.Fatal(one.Err())
	}
	var all, walked []string
	for _, ev := range one.Page().Events {
		all = append(all, ev.ID)
	}
	log := c.AuditLog.List(ctx, &edgemail.AuditLogListParams{Limit: 2})
	for log.Next() {
		walked = append(walked, log.Value().ID)
	}
	if log.Err() != nil || len(all) < 3 || strings.Join(walked, " ") != strings.Join(all, " ") {
		t.Fatalf("walked %v, one page %v (%v)", walked, all, log.Err())
	}
}

type delivery struct {
	header http.Header
	body   []byte
}

func webhookSignatures(t *testing.T, e *stackEnv) {
	ctx := ctxFor(t, 40*time.Second)
	var mu sync.Mutex
	var received []delivery
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, delivery{header: r.Header.Clone(), body: body})
		mu.Unlock()
		w.WriteHeader(200)
	}))
	defer receiver.Close()

	c := e.client(e.keyAll)
	created, err := c.Webhooks.Create(ctx, &edgemail.CreateWebhook{URL: receiver.URL + "/hooks", Events: []string{"inbound.received"}})
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := c.Webhooks.RotateSecret(ctx, created.Webhook.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Webhook.Secret == created.Webhook.Secret || !strings.HasPrefix(rotated.Webhook.Secret, "whsec_") {
		t.Fatal("rotating kept the secret")
	}

	id := e.forward(t, []byte("From: ann@example.org\r\nSubject: Hello\r\n\r\nHi\r\n"))
	var got *delivery
	for deadline := time.Now().Add(20 * time.Second); got == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		for i := range received {
			if bytes.Contains(received[i].body, []byte(id)) {
				got = &received[i]
			}
		}
		mu.Unlock()
	}
	if got == nil {
		t.Fatalf("no delivery of %s within 20s", id)
	}
	event, err := edgemail.VerifyWebhook(got.body, got.header, rotated.Webhook.Secret, 0)
	if err != nil {
		t.Fatalf("the dispatcher's signature under the rotated secret: %v", err)
	}
	var data struct {
		ID string `json:"id"`
	}
	if event.Event != "inbound.received" || json.Unmarshal(event.Data, &data) != nil || data.ID != id {
		t.Fatalf("event %s about %s, want inbound.received about %s", event.Event, data.ID, id)
	}

	sentAt, _ := strconv.ParseInt(got.header.Get("X-Service-Timestamp"), 10, 64)
	tampered := got.header.Clone()
	tampered.Set("X-Service-Signature", "sha256=00")
	var reindented bytes.Buffer
	json.Indent(&reindented, got.body, "", " ")
	refusals := map[string]error{
		"the secret before rotation": func() error {
			_, err := edgemail.VerifyWebhook(got.body, got.header, created.Webhook.Secret, 0)
			return err
		}(),
		"a re-encoded body": func() error {
			_, err := edgemail.VerifyWebhook(reindented.Bytes(), got.header, rotated.Webhook.Secret, 0)
			return err
		}(),
		"a timestamp 301s old": func() error {
			_, err := edgemail.VerifyWebhookAt(got.body, got.header, rotated.Webhook.Secret, 300*time.Second, time.Unix(sentAt+301, 0))
			return err
		}(),
		"a malformed signature": func() error {
			_, err := edgemail.VerifyWebhook(got.body, tampered, rotated.Webhook.Secret, 0)
			return err
		}(),
	}
	for what, err := range refusals {
		var verr *edgemail.WebhookVerificationError
		if !errors.As(err, &verr) {
			t.Errorf("%s: want a *WebhookVerificationError, got %v", what, err)
		}
	}
	if _, err := edgemail.VerifyWebhookAt(got.body, got.header, rotated.Webhook.Secret, 300*time.Second, time.Unix(sentAt+299, 0)); err != nil {
		t.Errorf("299s old, inside the tolerance: %v", err)
	}
}

func streams(t *testing.T, e *stackEnv) {
	ctx := ctxFor(t, 40*time.Second)
	line := strings.Repeat("x", 76) + "\r\n"
	raw := []byte("From: ann@example.org\r\nSubject: Big\r\n\r\n" + strings.Repeat(line, 3_000_000/len(line)+1))
	id := e.forward(t, raw)

	body, err := e.client(e.keyReader).InboundEmails.GetRaw(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	hash := sha256.New()
	buf := make([]byte, 64<<10)
	total, reads := 0, 0
	for {
		n, err := body.Read(buf)
		hash.Write(buf[:n])
		total += n
		if n > 0 {
			reads++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := sha256.Sum256(raw)
	if total != len(raw) || reads < 2 || hex.EncodeToString(hash.Sum(nil)) != hex.EncodeToString(want[:]) {
		t.Fatalf("read %d bytes in %d reads, want %d bytes byte for byte", total, reads, len(raw))
	}

	// The data export reads as NDJSON values, one per line.
	lines := e.client(e.keyAll).DataExport.Get(ctx)
	defer lines.Close()
	var got []edgemail.DataExportLine
	for lines.Next() {
		got = append(got, lines.Value())
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 || got[0].Type != "export" || got[0].Version != 1 || got[len(got)-1].Type != "end" {
		t.Fatalf("%d lines, first %+v, last %+v", len(got), got[0], got[len(got)-1])
	}
}

func errorKinds(t *testing.T, e *stackEnv) {
	ctx := ctxFor(t, 30*time.Second)
	c := e.client(e.keyAll)
	expect := func(what string, err error, status int, kind edgemail.ErrorKind, sentinel error) *edgemail.APIError {
		t.Helper()
		apiErr := apiError(t, err)
		if apiErr.Status != status || apiErr.Kind != kind || !errors.Is(err, sentinel) || apiErr.Message == "" {
			t.Fatalf("%s: got %d %s %q, want %d %s", what, apiErr.Status, apiErr.Kind, apiErr.Message, status, kind)
		}
		return apiErr
	}

	_, err := c.Emails.Send(ctx, &edgemail.SendEmail{From: "news@" + e.sendDomain, To: edgemail.StringList{"not an address"}, Subject: edgemail.String("s"), Text: edgemail.String("t")})
	bad := expect("400", err, 400, edgemail.KindBadRequest, edgemail.ErrValidation)
	if len(bad.Fields) == 0 || !strings.Contains(bad.Message, "invalid") {
		t.Fatalf("400 without field errors: %q %v", bad.Message, bad.Fields)
	}

	_, err = e.client("myk_nothing_like_a_real_key").Domains.List(ctx)
	expect("401", err, 401, edgemail.KindUnauthorized, edgemail.ErrUnauthorized)

	_, err = e.client(e.keyReader).Webhooks.List(ctx)
	if denied := expect("403", err, 403, edgemail.KindForbidden, edgemail.ErrForbidden); denied.Message != "no access to webhooks in this project" {
		t.Fatalf("403 message %q", denied.Message)
	}
	_, err = e.client(e.keyWebhooksRead).Webhooks.Create(ctx, &edgemail.CreateWebhook{URL: "http://127.0.0.1:9/x", Events: []string{"*"}})
	if denied := expect("403 naming the permission", err, 403, edgemail.KindForbidden, edgemail.ErrForbidden); denied.RequiredPermission() != "webhooks:write" {
		t.Fatalf("RequiredPermission %q from %q", denied.RequiredPermission(), denied.Message)
	}

	_, err = e.client(e.keyReader).InboundEmails.Get(ctx, "0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11")
	expect("404", err, 404, edgemail.KindNotFound, edgemail.ErrNotFound)

	_, err = c.APIKeys.Create(ctx, &edgemail.CreateAPIKey{Name: strings.Repeat("x", 70_000)})
	expect("413", err, 413, edgemail.KindPayloadTooLarge, edgemail.ErrPayloadTooLarge)

	template, err := c.Templates.Create(ctx, &edgemail.CreateTemplate{Name: "bare-" + random()})
	if err != nil {
		t.Fatal(err)
	}
	version, err := c.Templates.CreateVersion(ctx, template.Template.ID, &edgemail.CreateTemplateVersion{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Templates.Preview(ctx, template.Template.ID, version.Version.ID, &edgemail.TemplatePreviewRequest{})
	if unprocessable := expect("422", err, 422, edgemail.KindUnprocessable, edgemail.ErrUnprocessable); !strings.Contains(unprocessable.Message, "has no localizations") {
		t.Fatalf("422 message %q", unprocessable.Message)
	}
}

func planLimit(t *testing.T, e *stackEnv) {
	ctx := ctxFor(t, 30*time.Second)
	rec := &recorder{}
	c := e.client(e.planKey, edgemail.WithRoundTripper(rec))
	message := &edgemail.SendEmail{From: "news@" + e.planDomain, To: edgemail.StringList{"ann@example.org"}, Subject: edgemail.String("hi"), Text: edgemail.String("x")}
	if _, err := c.Emails.Send(ctx, message); err != nil {
		t.Fatal(err)
	}
	_, err := c.Emails.Send(ctx, message)
	limited := apiError(t, err)
	if limited.Status != 429 || limited.Kind != edgemail.KindPlanLimit || !limited.IsPlanLimit() || !errors.Is(err, edgemail.ErrPlanLimit) || !errors.Is(err, edgemail.ErrRateLimited) {
		t.Fatalf("a plan's hourly limit: %d %s", limited.Status, limited.Kind)
	}
	if limited.Message != "hourly email limit reached (1 per hour on plan one-an-hour)" {
		t.Fatalf("message %q", limited.Message)
	}
	if rec.count() != 2 {
		t.Fatalf("%d attempts: a plan limit is not retried, though the send carries an Idempotency-Key", rec.count())
	}
}

// TestMainStack runs everything on the main stack side by side, then takes
// its database away for the 5xx.
func TestMainStack(t *testing.T) {
	t.Parallel()
	e := stack(t)
	t.Run("side by side", func(t *testing.T) {
		for _, test := range []struct {
			name string
			run  func(*testing.T, *stackEnv)
		}{
			{"keys", keys}, {"sends with and without an Idempotency-Key", sendIdempotency}, {"a lost answer", lostAnswer},
			{"paging", paging}, {"webhook signatures", webhookSignatures}, {"streams", streams},
			{"error kinds", errorKinds}, {"the plan limit", planLimit},
		} {
			test := test
			t.Run(test.name, func(t *testing.T) {
				t.Parallel()
				test.run(t, e)
			})
		}
	})
	ctx := ctxFor(t, 60*time.Second)
	client := func(opts ...edgemail.Option) *edgemail.Client { return e.client(e.keyAll, opts...) }
	control := func(action string) {
		resp, err := http.Post(e.controlURL+"/bridge/"+action, "text/plain", nil)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("bridge %s: %v", action, err)
			return
		}
		resp.Body.Close()
	}
	t.Run("the database out of reach: 503 with Retry-After and a request id; a keyless POST tried once, a GET retried after Retry-After", func(t *testing.T) {
		if _, err := client().Domains.List(ctx); err != nil {
			t.Fatal(err)
		}
		control("close")
		reopened := false
		defer func() {
			if !reopened {
				control("open")
			}
		}()
		_, err := client(edgemail.WithMaxRetries(0)).Domains.List(ctx)
		down := apiError(t, err)
		if down.Status != 503 || down.Kind != edgemail.KindServer || !errors.Is(err, edgemail.ErrServer) || down.RetryAfter != 5*time.Second || down.RequestID == "" {
			t.Fatalf("with the database down: %d %s retry after %v, request id %q", down.Status, down.Kind, down.RetryAfter, down.RequestID)
		}
		if down.Message != "service temporarily unavailable: the database did not answer; retry later" {
			t.Fatalf("503 message %q", down.Message)
		}

		once := &recorder{}
		_, err = client(edgemail.WithRoundTripper(once), edgemail.WithMaxRetries(3)).Suppressions.Create(ctx, &edgemail.CreateSuppression{Address: "gone@example.org"})
		if apiError(t, err).Status != 503 || once.count() != 1 {
			t.Fatalf("a keyless POST: %v after %d attempts", err, once.count())
		}

		retried := &recorder{}
		go func() { time.Sleep(time.Second); control("open") }()
		reopened = true
		if _, err := client(edgemail.WithRoundTripper(retried), edgemail.WithMaxRetries(2)).Domains.List(ctx); err != nil {
			t.Fatalf("the retried GET: %v", err)
		}
		if retried.count() != 2 || retried.at[1].Sub(retried.at[0]) < 5*time.Second-50*time.Millisecond {
			t.Fatalf("%d attempts, %v apart; want 2, Retry-After (5s) apart", retried.count(), retried.at[len(retried.at)-1].Sub(retried.at[0]))
		}
	})
}

// TestRequestRate runs on the second stack, whose ratelimit.api_per_minute is low.
func TestRequestRate(t *testing.T) {
	t.Parallel()
	e := stack(t)
	ctx := ctxFor(t, 90*time.Second)
	client := func(key string, opts ...edgemail.Option) *edgemail.Client {
		return edgemail.New(key, append([]edgemail.Option{edgemail.WithBaseURL(e.limitedURL)}, opts...)...)
	}
	// The burst, its refusal and the retrying call's first attempt must fall in one fixed one-minute
	// window: none of them starts in a window's last 8 seconds.
	if left := time.Minute - time.Duration(time.Now().UnixMilli()%60_000)*time.Millisecond; left < 8*time.Second {
		time.Sleep(left + 200*time.Millisecond)
	}
	plain := client(e.limitedKey, edgemail.WithMaxRetries(0))
	for i := 0; i < e.perMinute; i++ {
		if _, err := plain.APIKeys.List(ctx); err != nil {
			t.Fatalf("request %d of %d: %v", i+1, e.perMinute, err)
		}
	}
	_, err := plain.APIKeys.List(ctx)
	limited := apiError(t, err)
	if limited.Status != 429 || limited.Kind != edgemail.KindRateLimited || limited.IsPlanLimit() || !errors.Is(err, edgemail.ErrRateLimited) || errors.Is(err, edgemail.ErrPlanLimit) {
		t.Fatalf("over the request rate: %d %s", limited.Status, limited.Kind)
	}
	if limited.Message != fmt.Sprintf("rate limit exceeded: %d requests per minute", e.perMinute) || limited.RetryAfter < time.Second || limited.RetryAfter > time.Minute {
		t.Fatalf("message %q, retry after %v", limited.Message, limited.RetryAfter)
	}
	if limited.RateLimit == nil || limited.RateLimit.Limit != e.perMinute || limited.RateLimit.Remaining != 0 {
		t.Fatalf("RateLimit %+v", limited.RateLimit)
	}

	rec := &recorder{}
	if _, err := client(e.limitedKey, edgemail.WithRoundTripper(rec), edgemail.WithMaxRetries(3)).APIKeys.List(ctx); err != nil {
		t.Fatalf("the retrying call: %v", err)
	}
	asked, _ := strconv.Atoi(rec.retryAfter[0])
	if rec.count() != 2 || asked < 1 || rec.at[1].Sub(rec.at[0]) < time.Duration(asked)*time.Second-50*time.Millisecond {
		t.Fatalf("%d attempts %v apart; Retry-After said %ds", rec.count(), rec.at[len(rec.at)-1].Sub(rec.at[0]), asked)
	}
}
