// Package edgemail is the Go client of the edgemail API.
//
// The project API takes a project key (myk_...):
//
//	c := edgemail.New(os.Getenv("EDGEMAIL_KEY"), edgemail.WithBaseURL("https://mail.example.com"))
//	sent, err := c.Emails.Send(ctx, &edgemail.SendEmail{From: "news@example.com", To: edgemail.StringList{"ann@example.org"}, Subject: "Hi", Text: edgemail.String("Hello")})
//
// The platform operator's routes under /api/v1/admin take a platform credential (mya_...):
//
//	admin := edgemail.NewAdmin(os.Getenv("EDGEMAIL_PLATFORM_CREDENTIAL"), edgemail.WithBaseURL(baseURL))
//
// Refusals are *APIError values (errors.As), matching the sentinels ErrNotFound,
// ErrRateLimited and the others with errors.Is. List methods return an *Iter
// that follows the API's cursors. The resource services and their types are
// generated from the API's OpenAPI document (zz_generated_*.go); transport,
// errors, paging and webhook verification are written by hand beside them.
package edgemail
