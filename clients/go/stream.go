package edgemail

// An NDJSON answer (the data export) read one value per line as it streams.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Lines walks an application/x-ndjson answer one value at a time, never holding more than one line:
//
//	lines := c.DataExport.Get(ctx)
//	defer lines.Close()
//	for lines.Next() {
//		line := lines.Value()
//	}
//	if err := lines.Err(); err != nil { ... }
type Lines[T any] struct {
	ctx    context.Context
	t      *transport
	req    request
	body   io.ReadCloser
	reader *bufio.Reader
	value  T
	err    error
	done   bool
}

func newLines[T any](ctx context.Context, t *transport, r *request) *Lines[T] {
	return &Lines[T]{ctx: ctx, t: t, req: *r}
}

// Next reads the next line; false at the end of the answer or on an error.
func (l *Lines[T]) Next() bool {
	if l.done {
		return false
	}
	if l.body == nil {
		body, err := l.t.doStream(l.ctx, &l.req)
		if err != nil {
			l.err, l.done = err, true
			return false
		}
		l.body, l.reader = body, bufio.NewReaderSize(body, 64<<10)
	}
	for {
		line, err := l.reader.ReadBytes('\n')
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			var v T
			if jerr := json.Unmarshal(trimmed, &v); jerr != nil {
				l.err = fmt.Errorf("edgemail: decoding a line of %s: %w", l.req.path, jerr)
				l.Close()
				return false
			}
			l.value = v
			if err != nil && !errors.Is(err, io.EOF) {
				l.err = err
			}
			return true
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				l.err = err
			}
			l.Close()
			return false
		}
	}
}

// Value is the line Next read.
func (l *Lines[T]) Value() T { return l.value }

// Err is what stopped the reading; nil when the answer simply ended.
func (l *Lines[T]) Err() error { return l.err }

// Close releases the connection; safe to call more than once, and after the end.
func (l *Lines[T]) Close() error {
	l.done = true
	if l.body != nil {
		return l.body.Close()
	}
	return nil
}
