package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// ValidateResponse checks one response of operationID against the contract: the status must be
// declared for the operation, the declared response headers must be present when required and match
// their schemas when present, the Content-Type must be exactly one of the declared media types (wire.md
// §1: `application/json`, no parameters), and a JSON body must match the schema of that status.
//
// A text/event-stream body is not parsed (RunEvents 200). A body that is strict JSON except for bare
// `Infinity` / `-Infinity` tokens outside strings (echoed non-finite numbers, wire.md §3.1) is
// accepted: each token is validated as the largest finite number of its sign, so the rest of the
// body is still checked. For a HEAD request pass the body the GET would have sent.
//
// The error names the operation, the status and what did not match; nil means the response conforms.
func (c *Contract) ValidateResponse(operationID string, status int, header http.Header, body []byte) error {
	op, ok := c.ops[operationID]
	if !ok {
		return fmt.Errorf("api: unknown operationId %q", operationID)
	}
	resp, ok := op.responses[status]
	if !ok {
		return fmt.Errorf("api: %s: status %d is not declared (declared: %s)", operationID, status, op.statuses)
	}

	for _, h := range resp.headers {
		v, present := headerValue(header, h.name)
		if !present {
			if h.required {
				return fmt.Errorf("api: %s %d: required header %s is missing", operationID, status, h.name)
			}
			continue
		}
		if h.schema != nil {
			if err := h.schema.VisitJSON(v, c.respOpts...); err != nil {
				return fmt.Errorf("api: %s %d: header %s does not match its schema: %w", operationID, status, h.name, err)
			}
		}
	}

	if len(resp.media) == 0 {
		return nil
	}
	ct := header.Get("Content-Type")
	schema, declared := resp.media[strings.ToLower(strings.TrimSpace(ct))]
	if !declared {
		return fmt.Errorf("api: %s %d: Content-Type %q is not declared (want %s)", operationID, status, ct, mediaList(resp))
	}
	if schema == nil || !isJSONMedia(ct) {
		return nil // no schema, or a stream (text/event-stream): the body is not parsed
	}

	key := memoKey{schema, maphash.Bytes(memoSeed, body), len(body)}
	if c.memo.has(key) {
		return nil
	}
	value, err := decodeJSON(body, true)
	if err != nil {
		return fmt.Errorf("api: %s %d: body is not JSON: %w", operationID, status, err)
	}
	if err := schema.VisitJSON(value, c.respOpts...); err != nil {
		return fmt.Errorf("api: %s %d: body does not match the schema: %w", operationID, status, err)
	}
	c.memo.add(key)
	return nil
}

// memo remembers bodies that conformed to a schema, so that a body sent again
// (a poll of an unchanged run, a repeated error envelope) is not decoded and
// walked again: validation is a pure function of the schema and the bytes. Keys
// are a 64-bit seeded hash plus the length; the set is emptied when it fills.
type memo struct {
	mu   sync.Mutex
	seen map[memoKey]struct{}
}

type memoKey struct {
	schema *openapi3.Schema
	sum    uint64
	n      int
}

const memoSize = 1 << 14

var memoSeed = maphash.MakeSeed()

func (m *memo) has(k memoKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.seen[k]
	return ok
}

func (m *memo) add(k memoKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil || len(m.seen) >= memoSize {
		m.seen = make(map[memoKey]struct{}, 256)
	}
	m.seen[k] = struct{}{}
}

// Issue is one finding of request validation: where it is (`body`, `header`, `path` or `query`) and
// the JSON pointer into the body or the parameter name. It never carries a value (controls.md §7.1:
// journal entries hold no request data). The JSON form is the journal's `issues` element.
type Issue struct {
	In      string `json:"in"`
	Pointer string `json:"pointer"`
}

// RequestIssues validates a request of operationID — its path parameters (pathParams, already
// decoded), headers and query of r, and the body bytes — against the contract and returns the
// findings, or nil when the request conforms. The request's Content-Type is ignored: bodies are
// always read as JSON text, as the operations do (runs-api §6.1). A body that is not JSON gives one
// issue with the empty pointer (the whole document). Bodies of operations that declare none (RunStop,
// the GETs) are not looked at. An unknown operationID gives nil.
//
// The result is advisory: it never changes a response. RequestIssues never panics, whatever the body
// bytes are, and does not read r.Body.
func (c *Contract) RequestIssues(operationID string, r *http.Request, pathParams map[string]string, body []byte) []Issue {
	op, ok := c.ops[operationID]
	if !ok {
		return nil
	}
	var issues []Issue
	add := func(in, pointer string) {
		for _, is := range issues {
			if is.In == in && is.Pointer == pointer {
				return
			}
		}
		issues = append(issues, Issue{In: in, Pointer: pointer})
	}

	for _, p := range op.params {
		var v string
		var present bool
		switch p.In {
		case openapi3.ParameterInPath:
			v, present = pathParams[p.Name]
		case openapi3.ParameterInHeader:
			if r != nil {
				v, present = headerValue(r.Header, p.Name)
			}
		case openapi3.ParameterInQuery:
			if r != nil && r.URL != nil {
				q := r.URL.Query()
				if _, present = q[p.Name]; present {
					v = strings.Join(q[p.Name], ",")
				}
			}
		default:
			continue // cookies are not part of this API
		}
		if !present {
			if p.Required {
				add(p.In, p.Name)
			}
			continue
		}
		if p.Schema != nil && p.Schema.Value != nil {
			if err := p.Schema.Value.VisitJSON(v, c.reqOpts...); err != nil {
				add(p.In, p.Name)
			}
		}
	}

	if op.body == nil {
		return issues
	}
	if len(body) == 0 {
		if op.bodyRequired {
			add("body", "")
		}
		return issues
	}
	value, err := decodeJSON(body, false)
	if err != nil {
		add("body", "")
		return issues
	}
	ptrs := pointers(op.body.VisitJSON(value, c.reqOpts...))
	slices.Sort(ptrs) // kin-openapi reports property findings before missing required ones
	for _, ptr := range ptrs {
		add("body", ptr)
	}
	return issues
}

// pointers flattens a schema validation error into the JSON pointers of its findings.
func pointers(err error) []string {
	if err == nil {
		return nil
	}
	ses, other := SchemaErrors(err)
	var out []string
	for _, se := range ses {
		out = append(out, pointer(se.JSONPointer()))
	}
	if other {
		out = append(out, "") // anything else concerns the document as a whole
	}
	return out
}

// SchemaErrors flattens kin-openapi's findings in err (multi-errors walked) into
// its schema errors; other reports a finding that is not a schema error.
func SchemaErrors(err error) (ses []*openapi3.SchemaError, other bool) {
	var walk func(error)
	walk = func(err error) {
		var me openapi3.MultiError
		if errors.As(err, &me) {
			for _, e := range me {
				walk(e)
			}
			return
		}
		var se *openapi3.SchemaError
		if errors.As(err, &se) {
			ses = append(ses, se)
			return
		}
		other = true
	}
	if err != nil {
		walk(err)
	}
	return ses, other
}

// pointer renders path segments as an RFC 6901 JSON pointer ("" for the whole document).
func pointer(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func mediaList(r *response) string {
	list := make([]string, 0, len(r.media))
	for mt := range r.media {
		list = append(list, strconv.Quote(mt))
	}
	slices.Sort(list)
	return strings.Join(list, " or ")
}

func isJSONMedia(ct string) bool {
	mt := strings.ToLower(strings.TrimSpace(ct))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// decodeJSON parses one strict JSON text into the value model kin-openapi validates: objects as
// map[string]any, arrays as []any, numbers as float64. Numbers outside the binary64 range (which the
// emulator accepts, wire.md §2.2) become ±math.MaxFloat64 instead of failing, because kin-openapi
// rejects infinities. With nonFinite, bare Infinity / -Infinity tokens outside strings (vendor bodies
// echoing a non-finite value, wire.md §3.1) are accepted the same way.
func decodeJSON(body []byte, nonFinite bool) (any, error) {
	var v any
	err := json.Unmarshal(body, &v)
	if err == nil {
		return v, nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		// Only an out-of-range number can fail to decode into any: decode the lexemes and clamp.
		return decodeClamped(body)
	}
	if nonFinite {
		if fixed, ok := replaceInfinity(body); ok {
			if v, err2 := decodeClamped(fixed); err2 == nil {
				return v, nil
			}
		}
	}
	return nil, err
}

// decodeClamped decodes with json.Number and converts every number to float64, clamping overflow
// to ±math.MaxFloat64.
func decodeClamped(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid data after top-level value")
	}
	return clampNumbers(v), nil
}

func clampNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && math.IsInf(f, 0) {
			f = math.Copysign(math.MaxFloat64, f)
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = clampNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = clampNumbers(e)
		}
	}
	return v
}

// replaceInfinity rewrites every bare Infinity token outside strings as the number 1e999 (so
// -Infinity becomes -1e999), which decodeClamped turns into ±math.MaxFloat64. ok reports whether a
// token was replaced.
func replaceInfinity(body []byte) (out []byte, ok bool) {
	const token = "Infinity"
	inString, escaped := false, false
	for i := 0; i < len(body); i++ {
		b := body[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == 'I' && bytes.HasPrefix(body[i:], []byte(token)):
			if out == nil {
				out = make([]byte, 0, len(body)+8)
				out = append(out, body[:i]...)
			}
			out = append(out, "1e999"...)
			i += len(token) - 1
			ok = true
			continue
		}
		if out != nil {
			out = append(out, b)
		}
	}
	return out, ok
}
