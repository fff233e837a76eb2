package edgemail_test

// The README's recipes, compiled with the tests (examples without an Output
// comment are built, not run), so the documented calls cannot drift from the code.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	edgemail "github.com/edgemail/edgemail/clients/go"
)

func Example_send() {
	ctx := context.Background()
	c := edgemail.New(os.Getenv("EDGEMAIL_KEY"), edgemail.WithBaseURL("https://mail.example.com"))
	sent, err := c.Emails.Send(ctx, &edgemail.SendEmail{
		From:    "news@example.com",
		To:      edgemail.StringList{"ann@example.org"},
		Subject: edgemail.String("Hello"),
		HTML:    edgemail.String("<p>Hi Ann</p>"),
	}, &edgemail.RequestOptions{IdempotencyKey: "order-1234"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sent.Emails[0].ID)
}

func Example_inbound() {
	ctx := context.Background()
	c := edgemail.New(os.Getenv("EDGEMAIL_KEY"), edgemail.WithBaseURL("https://mail.example.com"))
	it := c.InboundEmails.List(ctx, &edgemail.InboundEmailsListParams{Status: "received"})
	for it.Next() {
		msg := it.Value()
		raw, err := c.InboundEmails.GetRaw(ctx, msg.ID)
		if err != nil {
			fmt.Println(err)
			return
		}
		_, _ = io.Copy(io.Discard, raw)
		raw.Close()
	}
	if err := it.Err(); err != nil {
		fmt.Println(err)
	}

	pages := c.InboundEmails.List(ctx, &edgemail.InboundEmailsListParams{Limit: 50})
	for pages.NextPage() {
		fmt.Println(len(pages.Page().InboundEmails), pages.Page().Next != nil)
	}

	lines := c.DataExport.Get(ctx)
	defer lines.Close()
	for lines.Next() {
		fmt.Println(lines.Value().Type)
	}
}

func ExampleVerifyWebhook() {
	secret := os.Getenv("WEBHOOK_SECRET")
	http.HandleFunc("/edgemail", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		event, err := edgemail.VerifyWebhook(body, r.Header, secret, 0)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
		if event.Event == "inbound.received" {
			var msg edgemail.InboundEmail
			_ = json.Unmarshal(event.Data, &msg)
		}
	})
}

func ExampleAPIError() {
	ctx := context.Background()
	c := edgemail.New(os.Getenv("EDGEMAIL_KEY"), edgemail.WithBaseURL("https://mail.example.com"))
	_, err := c.InboundEmails.Get(ctx, "0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11")
	var apiErr *edgemail.APIError
	switch {
	case errors.Is(err, edgemail.ErrNotFound):
		fmt.Println("gone")
	case errors.As(err, &apiErr) && apiErr.Kind == edgemail.KindRateLimited:
		time.Sleep(apiErr.RetryAfter)
	case errors.As(err, &apiErr) && apiErr.Kind == edgemail.KindForbidden:
		fmt.Println("needs", apiErr.RequiredPermission())
	case err != nil:
		fmt.Println(err)
	}
}

func ExampleNewAdmin() {
	ctx := context.Background()
	admin := edgemail.NewAdmin(os.Getenv("EDGEMAIL_PLATFORM_CREDENTIAL"), edgemail.WithBaseURL("https://mail.example.com"))
	created, err := admin.Projects.Create(ctx, &edgemail.CreateProject{Name: "acme"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The project API, in that project, with the same credential.
	inProject := edgemail.New(os.Getenv("EDGEMAIL_PLATFORM_CREDENTIAL"), edgemail.WithBaseURL("https://mail.example.com"), edgemail.WithProjectID(created.Project.ID))
	key, err := inProject.APIKeys.Create(ctx, &edgemail.CreateAPIKey{Name: "sender", Permissions: []string{"emails:write"}})
	if err == nil {
		fmt.Println(key.Token)
	}
}
