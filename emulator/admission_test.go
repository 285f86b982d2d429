package emulator_test

// Acceptance section A (admission and polling, items 1–21): RunCreate body
// validation (runs-api §6.1), the admitted record (§4) and RunGet (§6.2).

import (
	"bytes"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/api"
	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// admRunID is the shape of every run id (runs-api §12.1).
var admRunID = regexp.MustCompile(`^run_[0-9a-f]{32}$`)

// admQueued is the record of a just-admitted run at the frozen base whose
// session_id defaulted to the run id and whose model is the JSON text model.
func admQueued(id, model string) string {
	return `{"object":"hermes.run","run_id":"` + id + `","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + id + `","model":` + model + `}`
}

// admStarted is the 202 body of a new run.
func admStarted(id string) string {
	return `{"run_id":"` + id + `","status":"started","replayed":false}`
}

// acceptance 1
func TestA01PollTwiceInNamespace(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.clock(`{"set":1700000000125,"freeze":true}`)
	x.ns = "a"
	const id = "run_4a3033333169443477756e7a31375069"
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 202, admStarted(id))
	want := `{"object":"hermes.run","run_id":"` + id + `","status":"queued","updated_at":1700000000.125,"created_at":1700000000.125,"session_id":"` + id + `","model":"hermes-agent"}`
	x.want(x.get("/v1/runs/"+id), 200, want)
	x.want(x.get("/v1/runs/"+id), 200, want)
	if second := x.start(); second == id || second != "run_6f51585a75386c6f5439513977657968" {
		t.Fatalf("second start = %s, want a different id run_6f51585a75386c6f5439513977657968", second)
	}
}

// acceptance 2
func TestA02KeylessStartBody(t *testing.T) {
	for _, ns := range []string{"", "a", "some.other_NS-1"} {
		t.Run("ns="+ns, func(t *testing.T) {
			x := newH(t, emulator.Options{})
			x.ns = ns
			r := x.post("/v1/runs", `{"input":"synthetic"}`)
			if r.Status != 202 {
				t.Fatalf("status %d %s", r.Status, r.Body)
			}
			id := r.field(t, "run_id")
			if !admRunID.MatchString(id) {
				t.Fatalf("run_id %q", id)
			}
			x.want(r, 202, admStarted(id))
			if v, ok := r.Header["Idempotency-Replayed"]; ok {
				t.Fatalf("Idempotency-Replayed = %q on a keyless start", v)
			}
		})
	}
}

// acceptance 3
func TestA03PollKeyOrder(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	r := x.get("/v1/runs/" + id)
	x.want(r, 200, "")
	want := []string{"object", "run_id", "status", "updated_at", "created_at", "session_id", "model"}
	if got := jsonKeys(t, r.Body); !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
}

// acceptance 4
func TestA04OptionalFieldsAccepted(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	body := `{"input":[{"role":"assistant","content":"synthetic text"}],"model":"synthetic-model","session_id":"synthetic-session","previous_response_id":"missing-is-ignored","conversation_history":[{"role":1,"content":null}]}`
	var ids []string
	for range 2 {
		r := x.post("/v1/runs", body)
		x.want(r, 202, "")
		ids = append(ids, r.field(t, "run_id"))
	}
	if ids[0] == ids[1] {
		t.Fatalf("same id twice: %s", ids[0])
	}
	for _, id := range ids {
		x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"synthetic-session","model":"synthetic-model"}`)
	}
}

// acceptance 5
func TestA05MemoryKeyEchoedPathNamespace(t *testing.T) {
	x := newH(t, emulator.Options{})
	r := x.post("/ns/a/v1/runs", `{"input":"synthetic input"}`, "Content-Type", "text/plain", "X-Hermes-Session-Key", "synthetic-memory")
	x.want(r, 202, "")
	if got := r.Header.Values("X-Hermes-Session-Key"); !slices.Equal(got, []string{"synthetic-memory"}) {
		t.Fatalf("X-Hermes-Session-Key = %q", got)
	}
	id := r.field(t, "run_id")
	if id != "run_4a3033333169443477756e7a31375069" {
		t.Fatalf("id %s is not the first id of namespace a", id)
	}
	p := x.get("/ns/a/v1/runs/" + id)
	x.want(p, 200, "")
	if got := p.field(t, "session_id"); got != id {
		t.Fatalf("session_id = %q, want %q", got, id)
	}
	x.want(x.get("/v1/runs/"+id), 404, hermesErr("Run not found: "+id, "run_not_found"))
}

// acceptance 6–9: 400 validation errors, code null.
func TestA06to09BodyValidation(t *testing.T) {
	tests := []struct {
		body, msg string
	}{
		{`{}`, "Missing 'input' field"}, // 6
		{`{"input":[]}`, "Missing 'input' field"},
		{`{"input":{}}`, "Missing 'input' field"},
		{`{"input":""}`, "Missing 'input' field"},
		{`{"input":0}`, "Missing 'input' field"},
		{`{"input":1}`, "No user message found in input"}, // 7
		{`{"input":{"a":1}}`, "No user message found in input"},
		{`{"input":[{"role":"user","content":""}]}`, "No user message found in input"},
		{`{"input":"ok","conversation_history":"bad"}`, "'conversation_history' must be an array of message objects"},   // 8
		{`{"input":"ok","conversation_history":[{}]}`, "conversation_history[0] must have 'role' and 'content' fields"}, // 9
		{`{"input":"ok","conversation_history":[{"role":"u","content":"c"},{"role":"u"}]}`, "conversation_history[1] must have 'role' and 'content' fields"},
	}
	x := newH(t, emulator.Options{})
	for _, tc := range tests {
		r := x.post("/v1/runs", tc.body)
		if r.Status != 400 || string(r.Body) != hermesErr(tc.msg, "") {
			t.Errorf("%s: got %d %s, want 400 %s", tc.body, r.Status, r.Body, tc.msg)
		}
	}
	// No failure consumed an id.
	if id := x.start(); id != run1 {
		t.Fatalf("first valid start = %s, want %s", id, run1)
	}
}

// acceptance 10
func TestA10InvalidJSONConsumesNoID(t *testing.T) {
	x := newH(t, emulator.Options{})
	r := x.post("/ns/a/v1/runs", `{`)
	x.want(r, 400, hermesErr("Invalid JSON", ""))
	x.want(x.post("/ns/a/v1/runs", `{"input":"synthetic"}`), 202, admStarted("run_4a3033333169443477756e7a31375069"))
}

// acceptance 11
func TestA11EmptyBody(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{})
		x.inproc = inproc
		x.want(x.post("/v1/runs", ""), 400, hermesErr("Invalid JSON", ""))
	}
}

// acceptance 12–14: explicit out-of-subset submissions (runs-api §6.8).
func TestA12to14Unsupported(t *testing.T) {
	tests := []struct{ body, detail string }{
		{`null`, "non-object submission roots are outside the verified subset"}, // 12
		{`[]`, "non-object submission roots are outside the verified subset"},
		{`"x"`, "non-object submission roots are outside the verified subset"},
		{`1`, "non-object submission roots are outside the verified subset"},
		{`{"input":[null]}`, "malformed input elements are outside the verified subset"}, // 13
		{`{"input":["text"]}`, "malformed input elements are outside the verified subset"},
		{`{"input":"x","hosted_room_dispatch":{}}`, "hosted-room dispatch is outside the peer-run subset"}, // 14
		{`{"input":"x","_room_execution_policy":null}`, "hosted-room dispatch is outside the peer-run subset"},
	}
	x := newH(t, emulator.Options{})
	for _, tc := range tests {
		r := x.post("/v1/runs", tc.body)
		if r.Status != 501 || string(r.Body) != unsupportedErr(tc.detail) {
			t.Errorf("%s: got %d %s, want 501 %s", tc.body, r.Status, r.Body, tc.detail)
		}
	}
	if id := x.start(); id != run1 {
		t.Fatalf("first valid start = %s, want %s", id, run1)
	}
}

// acceptance 15: model is echoed verbatim whenever the key is present.
func TestA15Model(t *testing.T) {
	tests := []struct{ field, want string }{
		{``, `"hermes-agent"`},
		{`,"model":null`, `null`},
		{`,"model":""`, `""`},
		{`,"model":false`, `false`},
		{`,"model":0`, `0`},
		{`,"model":[]`, `[]`},
		{`,"model":{}`, `{}`},
		{`,"model":"synthetic-model"`, `"synthetic-model"`},
	}
	x := newH(t, emulator.Options{})
	x.freeze()
	for _, tc := range tests {
		r := x.post("/v1/runs", `{"input":"x"`+tc.field+`}`)
		x.want(r, 202, "")
		id := r.field(t, "run_id")
		if p := x.get("/v1/runs/" + id); p.Status != 200 || string(p.Body) != admQueued(id, tc.want) {
			t.Errorf("model%s: got %d %s\nwant %s", tc.field, p.Status, p.Body, admQueued(id, tc.want))
		}
	}
}

// acceptance 16: a falsy session_id is replaced by the run id.
func TestA16SessionIDFalsy(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	for _, v := range []string{`0`, `""`, `null`, `false`, `0.0`, `[]`} {
		r := x.post("/v1/runs", `{"input":"x","session_id":`+v+`}`)
		x.want(r, 202, "")
		id := r.field(t, "run_id")
		if p := x.get("/v1/runs/" + id); string(p.Body) != admQueued(id, `"hermes-agent"`) {
			t.Errorf("session_id %s: got %s", v, p.Body)
		}
	}
	r := x.post("/v1/runs", `{"input":"x","session_id":1.5}`)
	id := r.field(t, "run_id")
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":1.5,"model":"hermes-agent"}`)
}

// acceptance 17: echoed numbers keep their Python type and precision.
func TestA17SessionIDNumbers(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, v := range []string{`12345678901234567890`, `1.0`} {
		r := x.post("/v1/runs", `{"input":"x","session_id":`+v+`}`)
		x.want(r, 202, "")
		p := x.get("/v1/runs/" + r.field(t, "run_id"))
		x.want(p, 200, "")
		if !bytes.Contains(p.Body, []byte(`"session_id":`+v+`,`)) {
			t.Errorf("session_id %s: body %s", v, p.Body)
		}
	}
}

// acceptance 18
func TestA18UnknownRun(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.get("/v1/runs/missing"), 404, hermesErr("Run not found: missing", "run_not_found"))
}

// acceptance 19: with a live clock, polls without changes are byte-identical.
func TestA19PollStableOnLiveClock(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	first := x.get("/v1/runs/" + id)
	x.want(first, 200, "")
	for range 2 {
		time.Sleep(15 * time.Millisecond)
		x.want(x.get("/v1/runs/"+id), 200, string(first.Body))
	}
}

// admStep is one request of the acceptance 20 sequence.
type admStep struct {
	method, path, body string
	hdr                []string
	op                 string // operationId, "" for a control request (not compared)
}

// acceptance 20: two fresh instances fed the same requests answer identically,
// with only declared statuses.
func TestA20TwoInstancesIdentical(t *testing.T) {
	const id1, id2, id3 = run1, "run_57703349705258663741626769756c5a", "run_77774b677732707967695639616f3561"
	key := []string{"Idempotency-Key", "delivery"}
	steps := []admStep{
		{"POST", "/__admin/clock", `{"set":1700000000000,"freeze":true}`, nil, ""},
		{"POST", "/v1/runs", `{"input":"synthetic"}`, key, "RunCreate"},
		{"POST", "/v1/runs", `{"input":"synthetic"}`, key, "RunCreate"},
		{"POST", "/v1/runs", `{"input":"different"}`, key, "RunCreate"},
		{"POST", "/v1/runs", `{"input":"synthetic","model":"m"}`, []string{"X-Hermes-Session-Key", "memory"}, "RunCreate"},
		{"POST", "/v1/runs", `{}`, nil, "RunCreate"},
		{"POST", "/v1/runs", `{`, nil, "RunCreate"},
		{"POST", "/v1/runs", `[]`, nil, "RunCreate"},
		{"GET", "/v1/runs/" + id1, "", nil, "RunGet"},
		{"GET", "/v1/runs/" + id2, "", nil, "RunGet"},
		{"GET", "/v1/runs/missing", "", nil, "RunGet"},
		{"POST", "/v1/runs/" + id1 + "/stop", "", nil, "RunStop"},
		{"POST", "/v1/runs/" + id1 + "/stop", "{}", nil, "RunStop"},
		{"POST", "/v1/runs/missing/stop", "", nil, "RunStop"},
		{"GET", "/v1/runs/" + id1, "", nil, "RunGet"},
		{"POST", "/__admin/clock", `{"advance":1250}`, nil, ""},
		{"POST", "/__admin/hermes/runs/" + id1 + "/observe", `{"status":"completed","output":"done"}`, nil, ""},
		{"POST", "/v1/runs/" + id1 + "/stop", "", nil, "RunStop"},
		{"POST", "/v1/runs", `{"input":"synthetic"}`, key, "RunCreate"},
		{"POST", "/v1/runs", `{"input":"synthetic"}`, []string{"Idempotency-Key", "other"}, "RunCreate"},
		{"POST", "/__admin/hermes/restart", `{"owner":"alive"}`, nil, ""},
		{"POST", "/v1/runs/" + id3 + "/stop", "", nil, "RunStop"},
		{"GET", "/v1/runs/" + id3, "", nil, "RunGet"},
		{"GET", "/v1/runs/" + id2, "", nil, "RunGet"},
		{"POST", "/v1/runs", `{"input":"synthetic"}`, []string{"Idempotency-Key", "other"}, "RunCreate"},
	}
	declared := map[string][]int{"RunCreate": {202, 400, 409, 501}, "RunGet": {200, 404}, "RunStop": {200, 404, 409}}
	a, b := newH(t, emulator.Options{}), newH(t, emulator.Options{})
	seen := map[string]map[int]bool{}
	for i, s := range steps {
		ra, rb := a.do(s.method, s.path, s.body, s.hdr...), b.do(s.method, s.path, s.body, s.hdr...)
		if s.op == "" {
			a.want(ra, 200, "")
			b.want(rb, 200, "")
			continue
		}
		if !slices.Contains(declared[s.op], ra.Status) {
			t.Errorf("step %d %s %s: status %d not declared for %s", i, s.method, s.path, ra.Status, s.op)
		}
		if seen[s.op] == nil {
			seen[s.op] = map[int]bool{}
		}
		seen[s.op][ra.Status] = true
		ha, hb := ra.Header.Clone(), rb.Header.Clone()
		ha.Del("Date")
		hb.Del("Date")
		if ra.Status != rb.Status || !bytes.Equal(ra.Body, rb.Body) || !admSameHeader(ha, hb) {
			t.Errorf("step %d %s %s differs:\n a %d %v %s\n b %d %v %s", i, s.method, s.path, ra.Status, ha, ra.Body, rb.Status, hb, rb.Body)
		}
	}
	// The sequence exercised every declared status, so the comparison covered them all.
	for op, sts := range declared {
		for _, st := range sts {
			if !seen[op][st] {
				t.Errorf("the sequence never produced %s %d", op, st)
			}
		}
	}
}

// admSameHeader compares two header maps exactly (names and value lists).
func admSameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// acceptance 21: response bodies conform to openapi.yaml.
func TestA21ContractConformance(t *testing.T) {
	c, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	x := newH(t, emulator.Options{NoResponseValidation: true}) // validate here, not in the pipeline
	x.freeze()
	created := x.post("/v1/runs", `{"input":"synthetic"}`, "X-Hermes-Session-Key", "memory")
	id := created.field(t, "run_id")
	replayKey := []string{"Idempotency-Key", "k"}
	x.post("/v1/runs", `{"input":"synthetic"}`, replayKey...)
	replay := x.post("/v1/runs", `{"input":"synthetic"}`, replayKey...)
	queued := x.get("/v1/runs/" + id)
	x.want(x.observe(id, `{"status":"completed","output":"synthetic-result","usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5}}`), 200, "")
	completed := x.get("/v1/runs/" + id)
	cases := []struct {
		name, op string
		status   int
		r        res
	}{
		{"RunCreate 202 new", "RunCreate", 202, created},
		{"RunCreate 202 replay", "RunCreate", 202, replay},
		{"RunGet 200 queued", "RunGet", 200, queued},
		{"RunGet 200 completed", "RunGet", 200, completed},
		{"RunCreate 400", "RunCreate", 400, x.post("/v1/runs", `{}`)},
		{"RunCreate 501", "RunCreate", 501, x.post("/v1/runs", `[]`)},
		{"RunGet 404", "RunGet", 404, x.get("/v1/runs/missing")},
	}
	for _, tc := range cases {
		if tc.r.Status != tc.status {
			t.Errorf("%s: status %d %s", tc.name, tc.r.Status, tc.r.Body)
			continue
		}
		if err := c.ValidateResponse(tc.op, tc.r.Status, tc.r.Header, tc.r.Body); err != nil {
			t.Errorf("%s: %v\nbody %s", tc.name, err, tc.r.Body)
		}
	}
	// The validator does look at the body: a record missing its required fields fails.
	broken := strings.Replace(string(completed.Body), `"object":"hermes.run",`, "", 1)
	if err := c.ValidateResponse("RunGet", 200, completed.Header, []byte(broken)); err == nil {
		t.Errorf("a record without object validated: %s", broken)
	}
}
