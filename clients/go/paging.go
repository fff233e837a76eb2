package edgemail

// A list call returns an *Iter: Next/Value walk every item across pages,
// NextPage/Page walk whole pages. Nothing is fetched until one of them is used.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

// pagingRule says how a list's pages follow one another.
type pagingRule struct {
	// cursor: the answer's `next` object (null at the end) holds the next page's
	// query parameters of the same names; offset: the next page starts past the rows seen.
	kind         string
	items        string
	cursorFields []string
}

func cursorPaging(items string, fields ...string) pagingRule {
	return pagingRule{kind: "cursor", items: items, cursorFields: fields}
}

func offsetPaging(items string) pagingRule {
	return pagingRule{kind: "offset", items: items}
}

// Iter walks a list. Use either Next/Value (items) or NextPage/Page (pages), and check Err after the loop:
//
//	it := c.InboundEmails.List(ctx, &edgemail.InboundEmailsListParams{Status: "received"})
//	for it.Next() {
//		msg := it.Value()
//	}
//	if err := it.Err(); err != nil { ... }
type Iter[P any, T any] struct {
	ctx   context.Context
	t     *transport
	req   request
	rule  pagingRule
	query url.Values
	page  *P
	items []T
	index int
	err   error
}

func newIter[P any, T any](ctx context.Context, t *transport, r *request, rule pagingRule) *Iter[P, T] {
	it := &Iter[P, T]{ctx: ctx, t: t, req: *r, rule: rule}
	it.query, it.err = encodeQuery(r.query)
	return it
}

// Next advances to the next item, fetching the next page when one is used up; false at the end or on an error.
func (it *Iter[P, T]) Next() bool {
	for {
		if it.page != nil && it.index+1 < len(it.items) {
			it.index++
			return true
		}
		if !it.NextPage() {
			return false
		}
	}
}

// Value is the item Next advanced to.
func (it *Iter[P, T]) Value() T {
	if it.page == nil || it.index < 0 || it.index >= len(it.items) {
		var zero T
		return zero
	}
	return it.items[it.index]
}

// NextPage fetches the next page (the first one on the first call); false when the list has ended or on an error.
func (it *Iter[P, T]) NextPage() bool {
	if it.err != nil || it.query == nil {
		return false
	}
	r := it.req
	r.values = it.query
	raw, err := it.t.doBytes(it.ctx, &r)
	if err != nil {
		it.err = err
		return false
	}
	page := new(P)
	var fields map[string]json.RawMessage
	var items []T
	err = json.Unmarshal(raw, page)
	if err == nil {
		err = json.Unmarshal(raw, &fields)
	}
	if err == nil && fields[it.rule.items] != nil {
		err = json.Unmarshal(fields[it.rule.items], &items)
	}
	if err != nil {
		it.err = fmt.Errorf("edgemail: decoding a page of %s: %w", it.req.path, err)
		return false
	}
	it.page, it.items, it.index = page, items, -1
	it.query = it.nextQuery(fields, len(items))
	return true
}

// Page is the page NextPage fetched (or the one Value's item came from).
func (it *Iter[P, T]) Page() *P { return it.page }

// Err is what stopped the walk; nil when the list simply ended.
func (it *Iter[P, T]) Err() error { return it.err }

// All walks the rest of the list into one slice (mind the size of what you list).
func (it *Iter[P, T]) All() ([]T, error) {
	var all []T
	for it.Next() {
		all = append(all, it.Value())
	}
	return all, it.Err()
}

// nextQuery is the query of the page after this one; nil when this one was the last.
func (it *Iter[P, T]) nextQuery(fields map[string]json.RawMessage, n int) url.Values {
	if n == 0 {
		return nil
	}
	q := url.Values{}
	for k, v := range it.query {
		q[k] = append([]string(nil), v...)
	}
	if it.rule.kind == "cursor" {
		var next map[string]json.RawMessage
		if json.Unmarshal(fields["next"], &next) != nil || next == nil {
			return nil
		}
		for _, f := range it.rule.cursorFields {
			q.Del(f)
			var s string
			if raw, ok := next[f]; ok && json.Unmarshal(raw, &s) == nil {
				q.Set(f, s)
			} else if ok && string(raw) != "null" {
				q.Set(f, string(raw))
			}
		}
		return q
	}
	limit := int64(-1)
	if json.Unmarshal(fields["limit"], &limit) != nil || limit < 0 {
		if l, err := strconv.ParseInt(q.Get("limit"), 10, 64); err == nil {
			limit = l
		}
	}
	if limit >= 0 && int64(n) < limit {
		return nil
	}
	var offset int64
	if json.Unmarshal(fields["offset"], &offset) != nil {
		offset, _ = strconv.ParseInt(q.Get("offset"), 10, 64)
	}
	q.Set("offset", strconv.FormatInt(offset+int64(n), 10))
	return q
}
