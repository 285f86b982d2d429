package faults

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// rule is one stored fault rule: the object echoed by the admin API plus the
// fields Match needs, decoded once when the rule is added.
type rule struct {
	id  string
	obj *runs.Obj // the stored rule, keys in the order of controls.md §6.2 / §6.4

	anyNS     bool // namespace absent or "*"
	ns        string
	hasOp     bool
	op        string
	hasMethod bool
	method    string
	hasPrefix bool
	prefix    string

	rate      float64
	delay     time.Duration
	drop      bool
	hasEffect bool
	effect    Effect
	resp      *Response // non-nil when the rule answers (numeric status, not drop)

	counted   bool // the rule has a count
	remaining int64
	hits      int64

	size int // bytes of the stored rule as JSON, counted against MaxTotalBytes
}

// defaultFaultBody is the response body of a rule without "body" (controls.md §6.1).
var defaultFaultBody = []byte(`{"detail":"Injected by Mockingbird"}`)

// Messages of POST /__admin/faults (controls.md §6.2).
const msgNeeds = "a fault needs a numeric status, a delayMs/latencyMs, drop: true, an effect, or a preset"

func wrongType(field string) *runs.Error {
	return runs.Admin(400, "fault field "+field+" has the wrong type")
}

// isNumber reports whether v is a JSON number (integer or float).
func isNumber(v runs.Value) bool { return v.Kind == runs.Int || v.Kind == runs.Float }

// number returns the numeric value of an Int or Float (an Int beyond the
// float64 range becomes ±Inf).
func number(v runs.Value) float64 {
	if v.Kind == runs.Float {
		return v.Float
	}
	f, _ := strconv.ParseFloat(v.Int, 64)
	return f
}

// hasNeed reports the check of controls.md §6.2: the body has a numeric status,
// a numeric delayMs or latencyMs, "drop": true, or a string effect.
func hasNeed(o *runs.Obj) bool {
	if v, ok := o.Get("status"); ok && isNumber(v) {
		return true
	}
	if v, ok := o.Get("delayMs"); ok && isNumber(v) {
		return true
	}
	if v, ok := o.Get("latencyMs"); ok && isNumber(v) {
		return true
	}
	if v, ok := o.Get("drop"); ok && v.Kind == runs.Bool && v.Bool {
		return true
	}
	v, ok := o.Get("effect")
	return ok && v.Kind == runs.String
}

// compile checks the field types of a stored rule (controls.md §6.1), in the
// order of the field table, and decodes it. o must already hold a string "id".
//
// Type rules: id, operationId, method, pathPrefix, namespace, effect and preset
// are strings; status is an integral number from 200 to 999 (a final HTTP
// response: 1xx statuses are informational and cannot end a response); body is any value; headers is an object of strings;
// count is an integral number >= 0; rate is a number from 0 to 1 (else 400
// `fault field rate must be a number from 0 to 1`); a namespace other than "*"
// matches runs.NameRule (else 400 `fault field namespace must match …`, as no
// request could be in it); delayMs and latencyMs
// are integral numbers from 0 to MaxDelayMs (checkDelay); header names are
// HTTP tokens and header values hold no CR, LF or NUL (checkHeader);
// drop is a boolean; params is an object. null counts as the wrong type
// everywhere except in body.
func compile(o *runs.Obj) (*rule, *runs.Error) {
	r := &rule{obj: o, rate: 1, anyNS: true}
	str := func(name string) (string, bool, *runs.Error) {
		v, ok := o.Get(name)
		if !ok {
			return "", false, nil
		}
		if v.Kind != runs.String {
			return "", false, wrongType(name)
		}
		return v.Str, true, nil
	}
	var err *runs.Error
	if r.id, _, err = str("id"); err != nil {
		return nil, err
	}
	if r.op, r.hasOp, err = str("operationId"); err != nil {
		return nil, err
	}
	if r.method, r.hasMethod, err = str("method"); err != nil {
		return nil, err
	}
	if r.prefix, r.hasPrefix, err = str("pathPrefix"); err != nil {
		return nil, err
	}
	ns, hasNS, err := str("namespace")
	if err != nil {
		return nil, err
	}
	if hasNS && ns != "*" {
		if !runs.ValidName(ns) { // no request could be in it: the rule would never match
			return nil, runs.BadName("fault field namespace", 400)
		}
		r.anyNS, r.ns = false, ns
	}

	status := 0
	if v, ok := o.Get("status"); ok {
		f := 0.0
		if isNumber(v) {
			f = number(v)
		}
		// Below 200 Go would send a 1xx informational response and then a
		// default 200: such a status cannot be a fault's answer.
		if f != math.Trunc(f) || f < 200 || f > 999 {
			return nil, wrongType("status")
		}
		status = int(f)
	}
	body, hasBody := o.Get("body")
	var header [][2]string
	if v, ok := o.Get("headers"); ok {
		if v.Kind != runs.Object {
			return nil, wrongType("headers")
		}
		for i, k := range v.Obj.Keys {
			hv := v.Obj.Vals[i]
			if hv.Kind != runs.String {
				return nil, wrongType("headers")
			}
			if err := checkHeader(k, hv.Str); err != nil {
				return nil, err
			}
			header = setHeader(header, k, hv.Str)
		}
	}
	if v, ok := o.Get("count"); ok {
		f := -1.0
		if isNumber(v) {
			f = number(v)
		}
		if f != math.Trunc(f) || f < 0 {
			return nil, wrongType("count")
		}
		r.counted = true
		r.remaining = math.MaxInt64
		if f < math.MaxInt64 {
			r.remaining = int64(f)
		}
	}
	if v, ok := o.Get("rate"); ok {
		if !isNumber(v) {
			return nil, wrongType("rate")
		}
		if r.rate = number(v); r.rate < 0 || r.rate > 1 {
			return nil, runs.Admin(400, "fault field rate must be a number from 0 to 1")
		}
	}
	delayMs, hasDelay := o.Get("delayMs")
	if err := checkDelay("delayMs", delayMs, hasDelay); err != nil {
		return nil, err
	}
	latencyMs, hasLatency := o.Get("latencyMs")
	if err := checkDelay("latencyMs", latencyMs, hasLatency); err != nil {
		return nil, err
	}
	switch {
	case hasDelay:
		r.delay = msDuration(number(delayMs))
	case hasLatency:
		r.delay = msDuration(number(latencyMs))
	}
	if v, ok := o.Get("drop"); ok {
		if v.Kind != runs.Bool {
			return nil, wrongType("drop")
		}
		r.drop = v.Bool
	}
	if r.effect.Name, r.hasEffect, err = str("effect"); err != nil {
		return nil, err
	}
	r.effect.Params = runs.ObjectValue(nil)
	if v, ok := o.Get("params"); ok {
		if v.Kind != runs.Object {
			return nil, wrongType("params")
		}
		r.effect.Params = v
	}
	if _, _, err = str("preset"); err != nil {
		return nil, err
	}
	if status != 0 && !r.drop {
		r.resp = buildResponse(status, header, body, hasBody)
	}
	r.size = len(runs.MarshalValue(runs.ObjectValue(o)))
	return r, nil
}

// MaxDelayMs is the longest fault delay (hardening H6): ten minutes.
const MaxDelayMs = 600_000

// checkDelay checks a present delayMs or latencyMs: a number (else 400 `fault
// field <name> has the wrong type`) that is an integer from 0 to MaxDelayMs
// (else 400 `fault field <name> must be an integer from 0 to 600000`).
func checkDelay(name string, v runs.Value, present bool) *runs.Error {
	if !present {
		return nil
	}
	if !isNumber(v) {
		return wrongType(name)
	}
	if f := number(v); f != math.Trunc(f) || f < 0 || f > MaxDelayMs {
		return runs.Admin(400, "fault field "+name+" must be an integer from 0 to "+strconv.Itoa(MaxDelayMs))
	}
	return nil
}

// checkHeader checks one header of a rule (hardening H6): the name must be an
// HTTP token (RFC 9110 §5.6.2) and the value must not hold CR, LF or NUL, which
// would split or cut the response head → 400 `fault header <name> is not a
// valid header name` or `fault header <name> has a CR, LF or NUL in its value`.
func checkHeader(name, value string) *runs.Error {
	if !isToken(name) {
		return runs.Admin(400, "fault header "+strconv.Quote(runs.Echo(name))+" is not a valid header name")
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return runs.Admin(400, "fault header "+name+" has a CR, LF or NUL in its value")
	}
	// The server frames every answer: a length that disagrees with the body
	// would cut it or leave the client waiting (a dropped connection is
	// "drop": true).
	for _, framing := range []string{"Content-Length", "Transfer-Encoding"} {
		if strings.EqualFold(name, framing) {
			return runs.Admin(400, "fault header "+framing+" is set by the server")
		}
	}
	return nil
}

// isToken reports whether s is a non-empty HTTP token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// msDuration converts a delay in ms to a Duration: 0 when not positive,
// saturating at the largest Duration.
func msDuration(ms float64) time.Duration {
	if !(ms > 0) {
		return 0
	}
	ns := ms * float64(time.Millisecond)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// setHeader sets name to value, replacing a header of the same name compared
// case-insensitively in place (the later value wins, the first position stays).
func setHeader(h [][2]string, name, value string) [][2]string {
	for i := range h {
		if strings.EqualFold(h[i][0], name) {
			h[i] = [2]string{name, value}
			return h
		}
	}
	return append(h, [2]string{name, value})
}

// buildResponse builds the fault response of controls.md §6.6: Content-Type
// application/json unless the body is null, then the rule's headers (a rule
// header replaces a default of the same name case-insensitively), and the body
// of §6.1.
func buildResponse(status int, ruleHeader [][2]string, body runs.Value, hasBody bool) *Response {
	resp := &Response{Status: status}
	switch {
	case !hasBody:
		resp.Body = defaultFaultBody
	case body.Kind == runs.Null:
		resp.NoBody = true
	case body.Kind == runs.String:
		resp.Body = []byte(wellFormed(body.Str))
	default:
		resp.Body = runs.MarshalValue(body)
	}
	var h [][2]string
	if !resp.NoBody {
		h = append(h, [2]string{"Content-Type", "application/json"})
	}
	for _, kv := range ruleHeader {
		h = setHeader(h, kv[0], kv[1])
	}
	resp.Header = h
	return resp
}

// wellFormed replaces each WTF-8 lone surrogate of s by U+FFFD, as a
// JavaScript string is encoded to UTF-8 when it is sent; other bytes are kept.
func wellFormed(s string) string {
	var b []byte
	done := 0
	for i := 0; i+2 < len(s); i++ {
		if s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
			b = append(b, s[done:i]...)
			b = append(b, "\uFFFD"...)
			i += 2
			done = i + 1
		}
	}
	if b == nil {
		return s
	}
	return string(append(b, s[done:]...))
}

// matches reports whether the rule's selectors match the request
// (controls.md §6.5 step 2). operationId never matches an unmatched request.
func (r *rule) matches(q *Request) bool {
	if !r.anyNS && r.ns != q.NS {
		return false
	}
	if r.hasOp && (q.OperationID == "" || r.op != q.OperationID) {
		return false
	}
	if r.hasMethod && !strings.EqualFold(r.method, q.Method) {
		return false
	}
	return !r.hasPrefix || strings.HasPrefix(q.Path, r.prefix)
}
