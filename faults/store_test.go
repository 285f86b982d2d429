package faults

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// parse returns the parsed body and whether there is one ("" = no body).
func parse(t *testing.T, text string) (runs.Value, bool) {
	t.Helper()
	if text == "" {
		return runs.Value{}, false
	}
	v, err := runs.Parse([]byte(text))
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return v, true
}

func mustAdd(t *testing.T, s *Store, ns, body string) string {
	t.Helper()
	v, has := parse(t, body)
	out, err := s.Add(ns, v, has)
	if err != nil {
		t.Fatalf("Add(%s): %d %s", body, err.Status, err.Message)
	}
	return string(out)
}

func TestAdd(t *testing.T) {
	const needs = "a fault needs a numeric status, a delayMs/latencyMs, drop: true, an effect, or a preset"
	tests := []struct {
		name, ns, body string
		want           string // 201 body
		status         int    // error status
		msg            string // error message
	}{
		// acceptance 91
		{name: "rule of 91", ns: "a", body: `{"operationId":"RunGet","status":503,"body":{"message":"synthetic outage"}}`,
			want: `{"namespace":"a","operationId":"RunGet","status":503,"body":{"message":"synthetic outage"},"id":"fault_1"}`},
		{name: "namespace stays first", ns: "a", body: `{"status":500,"namespace":"*"}`,
			want: `{"namespace":"*","status":500,"id":"fault_1"}`},
		{name: "id keeps its position", ns: "default", body: `{"id":"x","status":500}`,
			want: `{"namespace":"default","id":"x","status":500}`},
		{name: "non-string id replaced in place", ns: "default", body: `{"id":5,"status":500}`,
			want: `{"namespace":"default","id":"fault_1","status":500}`},
		{name: "vendor rendering of echoed numbers", ns: "default", body: `{"status":500.0,"rate":1.0,"delayMs":1e2,"count":12345678901234567890}`,
			want: `{"namespace":"default","status":500.0,"rate":1.0,"delayMs":100.0,"count":12345678901234567890,"id":"fault_1"}`},
		{name: "latencyMs alone", ns: "default", body: `{"latencyMs":5}`, want: `{"namespace":"default","latencyMs":5,"id":"fault_1"}`},
		{name: "drop", ns: "default", body: `{"drop":true,"operationId":"RunGet"}`,
			want: `{"namespace":"default","drop":true,"operationId":"RunGet","id":"fault_1"}`},
		{name: "effect with params", ns: "n", body: `{"effect":"x.y","params":{"k":[1,"\u00e9"]}}`,
			want: `{"namespace":"n","effect":"x.y","params":{"k":[1,"é"]},"id":"fault_1"}`},
		// acceptance 94
		{name: "empty object", body: `{}`, status: 400, msg: needs},
		{name: "no body", body: ``, status: 400, msg: needs},
		{name: "array body", body: `[{"status":500}]`, status: 400, msg: needs},
		{name: "string status is not numeric", body: `{"status":"500"}`, status: 400, msg: needs},
		{name: "drop false", body: `{"drop":false}`, status: 400, msg: needs},
		{name: "effect not a string", body: `{"effect":1}`, status: 400, msg: needs},
		{name: "unknown preset", body: `{"preset":"nope"}`, status: 404, msg: `no fault preset "nope"`},
		{name: "a long unknown preset is quoted cut (H9)", body: `{"preset":"` + strings.Repeat("p", 3000) + `"}`, status: 404, msg: `no fault preset "` + strings.Repeat("p", 1024) + `"`},
		{name: "preset not a string", body: `{"preset":5}`, status: 400, msg: "fault field preset has the wrong type"},
		{name: "method type", body: `{"status":500,"method":1}`, status: 400, msg: "fault field method has the wrong type"},
		{name: "table order wins", body: `{"status":500,"method":1,"operationId":2}`, status: 400, msg: "fault field operationId has the wrong type"},
		{name: "null namespace", body: `{"status":500,"namespace":null}`, status: 400, msg: "fault field namespace has the wrong type"},
		{name: "status out of range", body: `{"status":99}`, status: 400, msg: "fault field status has the wrong type"},
		// A 1xx status would send an informational response and then a
		// default 200: only final statuses 200–999 are accepted.
		{name: "status 100", body: `{"status":100}`, status: 400, msg: "fault field status has the wrong type"},
		{name: "status 101 with body", body: `{"status":101,"body":null}`, status: 400, msg: "fault field status has the wrong type"},
		{name: "status 199", body: `{"status":199}`, status: 400, msg: "fault field status has the wrong type"},
		{name: "status 199.0", body: `{"status":199.0}`, status: 400, msg: "fault field status has the wrong type"},
		{name: "status 1000", body: `{"status":1000}`, status: 400, msg: "fault field status has the wrong type"},
		{name: "status 200 is the lowest", ns: "default", body: `{"status":200}`, want: `{"namespace":"default","status":200,"id":"fault_1"}`},
		{name: "status 999 is the highest", ns: "default", body: `{"status":999}`, want: `{"namespace":"default","status":999,"id":"fault_1"}`},
		{name: "fractional status", body: `{"status":500.5}`, status: 400, msg: "fault field status has the wrong type"},
		{name: "status type with drop", body: `{"drop":true,"status":"x"}`, status: 400, msg: "fault field status has the wrong type"},
		{name: "header value", body: `{"drop":true,"headers":{"a":1}}`, status: 400, msg: "fault field headers has the wrong type"},
		{name: "headers array", body: `{"drop":true,"headers":[]}`, status: 400, msg: "fault field headers has the wrong type"},
		{name: "negative count", body: `{"status":500,"count":-1}`, status: 400, msg: "fault field count has the wrong type"},
		{name: "fractional count", body: `{"status":500,"count":1.5}`, status: 400, msg: "fault field count has the wrong type"},
		{name: "rate string", body: `{"status":500,"rate":"0.5"}`, status: 400, msg: "fault field rate has the wrong type"},
		{name: "rate above 1", body: `{"status":500,"rate":2}`, status: 400, msg: "fault field rate must be a number from 0 to 1"},
		{name: "rate below 0", body: `{"status":500,"rate":-0.1}`, status: 400, msg: "fault field rate must be a number from 0 to 1"},
		{name: "rate 1e300", body: `{"status":500,"rate":1e300}`, status: 400, msg: "fault field rate must be a number from 0 to 1"},
		{name: "rate 0 is the lowest", body: `{"status":500,"rate":0}`, want: `{"namespace":"default","status":500,"rate":0,"id":"fault_1"}`},
		{name: "rate 1 is the highest", body: `{"status":500,"rate":1,"namespace":"*"}`, want: `{"namespace":"*","status":500,"rate":1,"id":"fault_1"}`},
		{name: "namespace of 64 characters", body: `{"status":500,"namespace":"` + strings.Repeat("a", 64) + `"}`,
			want: `{"namespace":"` + strings.Repeat("a", 64) + `","status":500,"id":"fault_1"}`},
		{name: "namespace with a space", body: `{"status":500,"namespace":"bad ns!"}`, status: 400, msg: "fault field namespace must match /^[A-Za-z0-9_.-]{1,64}$/"},
		{name: "empty namespace", body: `{"status":500,"namespace":""}`, status: 400, msg: "fault field namespace must match /^[A-Za-z0-9_.-]{1,64}$/"},
		{name: "namespace of 65 characters", body: `{"status":500,"namespace":"` + strings.Repeat("a", 65) + `"}`, status: 400, msg: "fault field namespace must match /^[A-Za-z0-9_.-]{1,64}$/"},
		{name: "delayMs string", body: `{"latencyMs":5,"delayMs":"5"}`, status: 400, msg: "fault field delayMs has the wrong type"},
		{name: "latencyMs string", body: `{"delayMs":5,"latencyMs":"5"}`, status: 400, msg: "fault field latencyMs has the wrong type"},
		{name: "drop string", body: `{"status":500,"drop":"yes"}`, status: 400, msg: "fault field drop has the wrong type"},
		{name: "params array", body: `{"effect":"x","params":[]}`, status: 400, msg: "fault field params has the wrong type"},

		// hardening H6: delays are integers from 0 to 600000 ms, header values hold no CR, LF or NUL
		{name: "delayMs 1e300", body: `{"delayMs":1e300}`, status: 400, msg: "fault field delayMs must be an integer from 0 to 600000"},
		{name: "delayMs 600001", body: `{"delayMs":600001}`, status: 400, msg: "fault field delayMs must be an integer from 0 to 600000"},
		{name: "delayMs negative", body: `{"status":500,"delayMs":-5}`, status: 400, msg: "fault field delayMs must be an integer from 0 to 600000"},
		{name: "delayMs fractional", body: `{"delayMs":2.5}`, status: 400, msg: "fault field delayMs must be an integer from 0 to 600000"},
		{name: "latencyMs 1e300", body: `{"latencyMs":1e300}`, status: 400, msg: "fault field latencyMs must be an integer from 0 to 600000"},
		{name: "latencyMs checked beside delayMs", body: `{"delayMs":5,"latencyMs":-1}`, status: 400, msg: "fault field latencyMs must be an integer from 0 to 600000"},
		{name: "delayMs 600000 is the longest", ns: "default", body: `{"delayMs":600000}`, want: `{"namespace":"default","delayMs":600000,"id":"fault_1"}`},
		{name: "NUL in a header value", body: `{"status":500,"headers":{"X-A":"a\u0000b"}}`, status: 400, msg: "fault header X-A has a CR, LF or NUL in its value"},
		{name: "CR LF in a header value", body: `{"status":500,"headers":{"X-A":"a\r\nSet-Cookie: x"}}`, status: 400, msg: "fault header X-A has a CR, LF or NUL in its value"},
		{name: "LF in a header value", body: `{"status":500,"headers":{"X-A":"a\nb"}}`, status: 400, msg: "fault header X-A has a CR, LF or NUL in its value"},
		{name: "header name with a space", body: `{"status":500,"headers":{"X A":"a"}}`, status: 400, msg: `fault header "X A" is not a valid header name`},
		{name: "empty header name", body: `{"status":500,"headers":{"":"a"}}`, status: 400, msg: `fault header "" is not a valid header name`},
		{name: "header name with a colon", body: `{"status":500,"headers":{"a:b":"a"}}`, status: 400, msg: `fault header "a:b" is not a valid header name`},
		{name: "Content-Length", body: `{"status":503,"headers":{"content-length":"5"}}`, status: 400, msg: "fault header Content-Length is set by the server"},
		{name: "Transfer-Encoding", body: `{"status":503,"headers":{"Transfer-Encoding":"chunked"}}`, status: 400, msg: "fault header Transfer-Encoding is set by the server"},
		{name: "other headers are the rule's", body: `{"status":503,"headers":{"Connection":"close","Content-Type":"text/plain"}}`,
			want: `{"namespace":"default","status":503,"headers":{"Connection":"close","Content-Type":"text/plain"},"id":"fault_1"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			v, has := parse(t, tc.body)
			ns := cmp.Or(tc.ns, "default") // the admin request's namespace, always a valid name
			out, err := s.Add(ns, v, has)
			if tc.msg != "" {
				if err == nil {
					t.Fatalf("got 201 %s, want %d %q", out, tc.status, tc.msg)
				}
				if err.Status != tc.status || err.Message != tc.msg || err.Envelope != runs.EnvAdmin {
					t.Fatalf("got %d %q (envelope %d), want %d %q", err.Status, err.Message, err.Envelope, tc.status, tc.msg)
				}
				if got := string(s.List()); got != `{"faults":[]}` {
					t.Fatalf("rejected rule was stored: %s", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %d %q", err.Status, err.Message)
			}
			if string(out) != tc.want {
				t.Fatalf("got  %s\nwant %s", out, tc.want)
			}
		})
	}
}

func TestAddIDs(t *testing.T) {
	s := NewStore()
	mustAdd(t, s, "default", `{"status":500}`)
	mustAdd(t, s, "default", `{"status":501,"id":"x"}`)
	if got := mustAdd(t, s, "default", `{"status":502}`); got != `{"namespace":"default","status":502,"id":"fault_3"}` {
		t.Fatalf("third rule: %s", got)
	}
	// fault_<rules+1> may name an existing rule: it is replaced in place
	// (controls.md §6.2 literally; see TestAutoIDRepeatsAfterDelete).
	if err := s.Delete("x"); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, "default", `{"status":503}`) // 2 rules → fault_3 again
	want := `{"faults":[{"namespace":"default","status":500,"id":"fault_1","remaining":null,"hits":0},` +
		`{"namespace":"default","status":503,"id":"fault_3","remaining":null,"hits":0}]}`
	if got := string(s.List()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestReplaceResetsCounters(t *testing.T) {
	s := NewStore()
	mustAdd(t, s, "default", `{"id":"a","status":500,"count":2}`)
	mustAdd(t, s, "default", `{"id":"b","status":501}`)
	s.Match(Request{NS: "default", Method: "GET", Path: "/x"}, func() float64 { return 0 })
	mustAdd(t, s, "default", `{"id":"a","status":502,"count":5}`)
	want := `{"faults":[{"namespace":"default","id":"a","status":502,"count":5,"remaining":5,"hits":0},` +
		`{"namespace":"default","id":"b","status":501,"remaining":null,"hits":0}]}`
	if got := string(s.List()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestPresetExpansion(t *testing.T) {
	tests := []struct {
		name         string
		post         bool // POST /__admin/faults with "preset"; else POST /faults/presets/:name
		ns           string
		preset, body string
		want         string
	}{
		{name: "faults route", post: true, ns: "default", body: `{"preset":"hermes_submit_accepted_drop"}`,
			want: `{"preset":"hermes_submit_accepted_drop","rules":[{"namespace":"default","operationId":"RunCreate","count":1,"effect":"hermes.accepted_drop","preset":"hermes_submit_accepted_drop","id":"hermes_submit_accepted_drop"}]}`},
		{name: "overrides in place", post: true, ns: "a", body: `{"preset":"hermes_poll_timeout","count":3,"namespace":"*","extra":true}`,
			want: `{"preset":"hermes_poll_timeout","rules":[{"namespace":"*","operationId":"RunGet","count":3,"delayMs":1000,"extra":true,"preset":"hermes_poll_timeout","id":"hermes_poll_timeout"}]}`},
		{name: "id override keeps its place", post: true, ns: "default", body: `{"id":"x","preset":"hermes_steer_refused"}`,
			want: `{"preset":"hermes_steer_refused","rules":[{"namespace":"default","operationId":"RunSteer","count":1,"effect":"hermes.steer_refused","id":"x","preset":"hermes_steer_refused"}]}`},
		{name: "presets route without body", ns: "b", preset: "hermes_throttled",
			want: `{"preset":"hermes_throttled","rules":[{"namespace":"b","operationId":"RunCreate","count":1,"status":429,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Too many concurrent runs (max 10)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}},"preset":"hermes_throttled","id":"hermes_throttled"}]}`},
		{name: "presets route with overrides", ns: "b", preset: "hermes_draining", body: `{"count":2,"status":503.0}`,
			want: `{"preset":"hermes_draining","rules":[{"namespace":"b","operationId":"RunCreate","count":2,"status":503.0,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Gateway is draining existing work; retry shortly.","type":"invalid_request_error","param":null,"code":"gateway_draining"}},"preset":"hermes_draining","id":"hermes_draining"}]}`},
		{name: "empty object is no override", ns: "b", preset: "hermes_steer_refused", body: `{}`,
			want: `{"preset":"hermes_steer_refused","rules":[{"namespace":"b","operationId":"RunSteer","count":1,"effect":"hermes.steer_refused","preset":"hermes_steer_refused","id":"hermes_steer_refused"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			v, has := parse(t, tc.body)
			var out []byte
			var err *runs.Error
			if tc.post {
				out, err = s.Add(tc.ns, v, has)
			} else {
				out, err = s.ApplyPreset(tc.ns, tc.preset, v, has)
			}
			if err != nil {
				t.Fatalf("got %d %q", err.Status, err.Message)
			}
			if string(out) != tc.want {
				t.Fatalf("got  %s\nwant %s", out, tc.want)
			}
		})
	}
}

func TestApplyPresetErrors(t *testing.T) {
	s := NewStore()
	// acceptance 94
	_, err := s.ApplyPreset("default", "nope", runs.Value{}, false)
	if err == nil || err.Status != 404 || err.Message != "no fault preset nope; GET /__admin/faults/presets" {
		t.Fatalf("unknown preset: %+v", err)
	}
	v, _ := parse(t, `{"status":100}`)
	_, err = s.ApplyPreset("default", "hermes_throttled", v, true)
	if err == nil || err.Status != 400 || err.Message != "fault field status has the wrong type" {
		t.Fatalf("1xx status override: %+v", err)
	}
	v, _ = parse(t, `{"count":"3"}`)
	_, err = s.ApplyPreset("default", "hermes_throttled", v, true)
	if err == nil || err.Status != 400 || err.Message != "fault field count has the wrong type" {
		t.Fatalf("bad override: %+v", err)
	}
	// The overrides must be an object (§6.4 "body = overrides object"): a
	// body such as [1], "x" or null was taken as no overrides and the preset
	// stored anyway.
	for _, body := range []string{`[1]`, `"x"`, `null`, `3`, `true`} {
		v, _ = parse(t, body)
		_, err = s.ApplyPreset("default", "hermes_throttled", v, true)
		if err == nil || err.Status != 400 || err.Message != "preset overrides must be an object" {
			t.Fatalf("body %s: %+v", body, err)
		}
	}
	if got := string(s.List()); got != `{"faults":[]}` {
		t.Fatalf("stored after errors: %s", got)
	}
}

// acceptance 96
func TestPresets(t *testing.T) {
	want := `{"presets":[` +
		`{"name":"hermes_submit_accepted_drop","description":"Admit one new run, then lose the response; retry with the same key to recover","rules":[{"operationId":"RunCreate","count":1,"effect":"hermes.accepted_drop"}]},` +
		`{"name":"hermes_poll_timeout","description":"Delay one poll by 1000ms to exercise a shorter client deadline","rules":[{"operationId":"RunGet","count":1,"delayMs":1000}]},` +
		`{"name":"hermes_throttled","description":"Reject one submission with the pinned default-capacity throttle envelope","rules":[{"operationId":"RunCreate","count":1,"status":429,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Too many concurrent runs (max 10)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}}]},` +
		`{"name":"hermes_draining","description":"Reject one submission with the pinned gateway-draining envelope","rules":[{"operationId":"RunCreate","count":1,"status":503,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Gateway is draining existing work; retry shortly.","type":"invalid_request_error","param":null,"code":"gateway_draining"}}}]},` +
		`{"name":"hermes_steer_refused","description":"Refuse the next steer after validation with the pinned steer_not_accepted conflict","rules":[{"operationId":"RunSteer","count":1,"effect":"hermes.steer_refused"}]}` +
		`]}`
	if got := string(Presets()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestDelete(t *testing.T) {
	s := NewStore()
	// acceptance 95
	if err := s.Delete("x"); err == nil || err.Status != 404 || err.Message != "no fault x" || err.Envelope != runs.EnvAdmin {
		t.Fatalf("unknown id: %+v", err)
	}
	mustAdd(t, s, "a", `{"status":500}`)
	mustAdd(t, s, "b", `{"status":501,"id":"x"}`)
	mustAdd(t, s, "c", `{"status":502}`)
	if err := s.Delete("x"); err != nil {
		t.Fatal(err)
	}
	want := `{"faults":[{"namespace":"a","status":500,"id":"fault_1","remaining":null,"hits":0},` +
		`{"namespace":"c","status":502,"id":"fault_3","remaining":null,"hits":0}]}`
	if got := string(s.List()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	s.Clear()
	if got := string(s.List()); got != `{"faults":[]}` {
		t.Fatalf("after delete all: %s", got)
	}
	if out := s.Match(Request{NS: "a", Method: "GET", Path: "/"}, func() float64 { t.Fatal("draw after delete all"); return 0 }); out.Response != nil {
		t.Fatal("rule fired after delete all")
	}
}

// DELETE /__admin/faults?id= (present but empty) names the rule with id "";
// it never removes every rule (controls.md §6.3: only an absent id does).
func TestDeleteEmptyID(t *testing.T) {
	s := NewStore()
	mustAdd(t, s, "default", `{"status":500}`)
	mustAdd(t, s, "default", `{"status":501,"id":"x"}`)
	err := s.Delete("")
	if err == nil || err.Status != 404 || err.Message != "no fault " || err.Envelope != runs.EnvAdmin {
		t.Fatalf("Delete(\"\") = %+v, want 404 %q", err, "no fault ")
	}
	want := `{"faults":[{"namespace":"default","status":500,"id":"fault_1","remaining":null,"hits":0},` +
		`{"namespace":"default","status":501,"id":"x","remaining":null,"hits":0}]}`
	if got := string(s.List()); got != want {
		t.Fatalf("after Delete(\"\"): %s", got)
	}
	// A rule stored with "id":"" is the one ?id= removes.
	mustAdd(t, s, "default", `{"status":502,"id":""}`)
	if err := s.Delete(""); err != nil {
		t.Fatalf("Delete of the rule with id \"\": %+v", err)
	}
	if got := string(s.List()); got != want {
		t.Fatalf("after deleting id \"\": %s", got)
	}
}

// controls.md §6.2 takes the automatic id literally: "fault_<number of rules
// + 1>". After a delete it can repeat the id of a rule that is still stored;
// the new rule then replaces that rule in place (§6.1 "adding a rule with an
// existing id replaces it", counters reset), so the older rule is gone. This
// is the seed package's behaviour and is kept on purpose.
func TestAutoIDRepeatsAfterDelete(t *testing.T) {
	s := NewStore()
	mustAdd(t, s, "default", `{"status":500}`)                                  // fault_1
	mustAdd(t, s, "default", `{"operationId":"RunGet","status":501,"count":2}`) // fault_2
	s.Match(Request{NS: "default", OperationID: "RunGet", Method: "GET", Path: "/v1/runs/x"}, zero)
	if err := s.Delete("fault_1"); err != nil {
		t.Fatal(err)
	}
	// One rule left → the automatic id is fault_2 again.
	if got, want := mustAdd(t, s, "default", `{"status":502}`), `{"namespace":"default","status":502,"id":"fault_2"}`; got != want {
		t.Fatalf("added %s, want %s", got, want)
	}
	want := `{"faults":[{"namespace":"default","status":502,"id":"fault_2","remaining":null,"hits":0}]}`
	if got := string(s.List()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// At most MaxRules rules per namespace (hardening H6): the next one is 409 and
// nothing is stored; replacing a rule by id, other namespaces and presets of
// another namespace still work, and a preset past the limit is refused too.
func TestMaxRulesPerNamespace(t *testing.T) {
	s := NewStore()
	for i := 0; i < MaxRules; i++ {
		mustAdd(t, s, "a", `{"status":500}`)
	}
	full := func(what string, err *runs.Error) {
		t.Helper()
		if err == nil || err.Status != 409 || err.Envelope != runs.EnvAdmin || err.Message != "too many fault rules (max 1000)" {
			t.Fatalf("%s: got %v, want 409 too many fault rules (max 1000)", what, err)
		}
	}
	v, _ := parse(t, `{"status":503}`)
	_, err := s.Add("a", v, true)
	full("rule 1001", err)
	_, err = s.ApplyPreset("a", "hermes_poll_timeout", runs.Value{}, false)
	full("preset as rule 1001", err)
	v, _ = parse(t, `{"preset":"hermes_throttled"}`)
	_, err = s.Add("a", v, true)
	full("preset body as rule 1001", err)
	mustAdd(t, s, "a", `{"id":"fault_7","status":418}`) // a replacement adds nothing
	mustAdd(t, s, "b", `{"status":500}`)
	mustAdd(t, s, "a", `{"status":500,"namespace":"*"}`)
	if n := strings.Count(string(s.List()), `"id":`); n != MaxRules+2 {
		t.Fatalf("%d rules stored, want %d", n, MaxRules+2)
	}
	if !strings.Contains(string(s.List()), `{"namespace":"a","id":"fault_7","status":418,"remaining":null,"hits":0}`) {
		t.Fatal("fault_7 was not replaced")
	}
}

// At most MaxTotalRules rules in the process, whatever their namespaces (a
// rule's namespace is any string, so the per-namespace bound alone bounds
// nothing): the next new one is 409 and nothing is stored; a replacement by
// id still works, and a deletion makes room.
func TestMaxTotalRules(t *testing.T) {
	s := NewStore()
	for i := range MaxTotalRules {
		mustAdd(t, s, "a", fmt.Sprintf(`{"id":"r%d","status":500,"namespace":"n%d"}`, i, i))
	}
	want := "too many fault rules in all namespaces (max 10000)"
	for _, body := range []string{`{"status":503,"namespace":"fresh"}`, `{"status":503,"namespace":"*"}`, `{"preset":"hermes_throttled","namespace":"fresh"}`} {
		v, _ := parse(t, body)
		_, err := s.Add("fresh", v, true)
		if err == nil || err.Status != 409 || err.Envelope != runs.EnvAdmin || err.Message != want {
			t.Fatalf("%s: got %v, want 409 %s", body, err, want)
		}
	}
	_, err := s.ApplyPreset("fresh", "hermes_poll_timeout", runs.Value{}, false)
	if err == nil || err.Status != 409 || err.Message != want {
		t.Fatalf("preset: got %v, want 409 %s", err, want)
	}
	mustAdd(t, s, "a", `{"id":"r5","status":418,"namespace":"n5"}`) // a replacement adds nothing
	if n := strings.Count(string(s.List()), `"id":`); n != MaxTotalRules {
		t.Fatalf("%d rules stored, want %d", n, MaxTotalRules)
	}
	if err := s.Delete("r9"); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, "fresh", `{"status":503}`)
}

// The rules are bounded in bytes as well as in number (STYLE rule 14): each
// may be as large as a request body, so 10,000 of them could hold 100 GB. A
// new rule, or a replacement, that would take the stored rules past
// MaxTotalBytes answers 409 and stores nothing; a smaller replacement or a
// delete makes room.
func TestMaxTotalBytes(t *testing.T) {
	s := NewStore()
	mib := strings.Repeat("x", 1<<20)
	for i := range 63 {
		mustAdd(t, s, "a", fmt.Sprintf(`{"id":"r%d","status":500,"body":"%s"}`, i, mib))
	}
	want := "too many fault rule bytes in all namespaces (max 64 MiB)"
	for _, body := range []string{
		`{"id":"new","status":500,"body":"` + mib + `"}`,
		`{"id":"r0","status":500,"body":"` + mib + mib + `"}`, // a replacement that grows
		`{"preset":"hermes_throttled","params":{"x":"` + mib + `"}}`,
	} {
		v, _ := parse(t, body)
		_, err := s.Add("a", v, true)
		if err == nil || err.Status != 409 || err.Envelope != runs.EnvAdmin || err.Message != want {
			t.Fatalf("%.60s…: got %v, want 409 %s", body, err, want)
		}
	}
	list := string(s.List())
	if n := strings.Count(list, `"id":`); n != 63 || strings.Contains(list, `"new"`) || strings.Contains(list, mib+mib) {
		t.Fatalf("%d rules stored (%d bytes)", n, len(list))
	}
	mustAdd(t, s, "a", `{"id":"small","status":500}`)
	mustAdd(t, s, "a", `{"id":"r1","status":500}`) // a smaller replacement frees its bytes
	mustAdd(t, s, "a", `{"id":"new","status":500,"body":"`+mib+`"}`)
	if err := s.Delete("r2"); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, "a", `{"id":"new2","status":500,"body":"`+mib+`"}`)
	s.Clear()
	for i := range 63 {
		mustAdd(t, s, "a", fmt.Sprintf(`{"id":"r%d","status":500,"body":"%s"}`, i, mib))
	}
}
