package edgemail

// Small helpers the generated types use: optional values, fields the API takes
// as one string or a list, path segments and query strings.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
)

// Ptr returns a pointer to v, for optional fields: edgemail.Ptr(true).
func Ptr[T any](v T) *T { return &v }

// String returns a pointer to s, for optional string fields.
func String(s string) *string { return &s }

// Int64 returns a pointer to n, for optional integer fields.
func Int64(n int64) *int64 { return &n }

// Bool returns a pointer to b, for optional boolean fields.
func Bool(b bool) *bool { return &b }

// StringList is a field the API takes as one string or a list (`to`, `cc`,
// a header that occurs once or more): it is sent as a list and read from either.
type StringList []string

// UnmarshalJSON reads a string as a list of one.
func (l *StringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = StringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*l = many
	return nil
}

// pathSegment escapes a path parameter as one segment.
func pathSegment(v any) string { return url.PathEscape(fmt.Sprint(v)) }

// encodeQuery turns a generated ...Params struct into a query string: each
// field tagged `query:"name"`, zero values left out, a slice repeating the parameter.
func encodeQuery(params any) (url.Values, error) {
	q := url.Values{}
	if isNil(params) {
		return q, nil
	}
	v := reflect.Indirect(reflect.ValueOf(params))
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("edgemail: query parameters must be a struct, not %s", v.Kind())
	}
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Tag.Get("query")
		if name == "" || v.Field(i).IsZero() {
			continue
		}
		f := reflect.Indirect(v.Field(i))
		if f.Kind() == reflect.Slice {
			for j := 0; j < f.Len(); j++ {
				q.Add(name, scalar(f.Index(j)))
			}
			continue
		}
		q.Set(name, scalar(f))
	}
	return q, nil
}

func scalar(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	default:
		return fmt.Sprint(v.Interface())
	}
}
