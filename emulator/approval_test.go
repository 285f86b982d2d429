package emulator_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Approval acceptance (acceptance.md I, items 120–135; runs-api §6.5;
// controls §11.1).

// apprPost posts a RunApproval body.
func (x *h) apprPost(id, body string) res {
	return x.post("/v1/runs/"+id+"/approval", body)
}

// apprWait observes run id waiting for approval with the approval object a
// ("" = none) and returns the generated or given request_id.
func (x *h) apprWait(id, a string) string {
	x.t.Helper()
	body := `{"status":"waiting_for_approval"}`
	if a != "" {
		body = `{"status":"waiting_for_approval","approval":` + a + `}`
	}
	r := x.observe(id, body)
	x.want(r, 200, "")
	var rec struct {
		Approval struct {
			RequestID string `json:"request_id"`
		}
	}
	if err := json.Unmarshal(r.Body, &rec); err != nil || rec.Approval.RequestID == "" {
		x.t.Fatalf("observe waiting: %s", r.Body)
	}
	return rec.Approval.RequestID
}

// apprOK is the 200 answer of RunApproval (rid "" = no request_id).
func apprOK(id, choice, rid string, resolved int) string {
	b := `{"object":"hermes.run.approval_response","run_id":"` + id + `","choice":"` + choice + `"`
	if rid != "" {
		b += `,"request_id":"` + rid + `"`
	}
	return b + `,"resolved":` + strconv.Itoa(resolved) + `}`
}

// acceptance 120, 135
func TestApprovalOnce(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	w := x.observe(id, `{"status":"waiting_for_approval","approval":{"command":"c"}}`)
	x.want(w, 200, `{"object":"hermes.run","run_id":"`+id+`","status":"waiting_for_approval","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"approval.request",`+
		`"approval":{"command":"c","request_id":"4f517459436b5145434675544552396b","event":"approval.request","run_id":"`+id+`","timestamp":1700000000.0,"choices":["once","session","always","deny"]}}`)
	s, _, _ := x.sseOpen(id)
	x.advance("250")
	r := x.apprPost(id, `{"choice":"once"}`)
	x.want(r, 200, apprOK(id, "once", "", 1))
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"running","updated_at":1700000000.25,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"approval.responded"}`)
	s.want(
		sseFrame(`{"command": "c", "request_id": "4f517459436b5145434675544552396b", "event": "approval.request", "run_id": "`+id+`", "timestamp": 1700000000.0, "choices": ["once", "session", "always", "deny"]}`),
		sseFrame(`{"event": "approval.responded", "run_id": "`+id+`", "timestamp": 1700000000.25, "choice": "once", "resolved": 1}`))

	// acceptance 135: checkpoint header; journal ids without the choice.
	cp := r.Header.Get("X-Mockingbird-Checkpoint")
	if !strings.HasPrefix(cp, "cp_") || len(cp) != 11 {
		t.Fatalf("x-mockingbird-checkpoint %q", cp)
	}
	j := x.get("/__admin/requests?operationId=RunApproval")
	var jr struct{ Requests []json.RawMessage }
	if err := json.Unmarshal(j.Body, &jr); err != nil || len(jr.Requests) != 1 {
		t.Fatalf("journal: %s", j.Body)
	}
	e := string(jr.Requests[0])
	for _, want := range []string{`"status":200`, `"ids":{"runId":"` + id + `"}`, `"accepted":true`, `"checkpoint":"` + cp + `"`} {
		if !strings.Contains(e, want) {
			t.Fatalf("journal entry lacks %s: %s", want, e)
		}
	}
	if strings.Contains(e, "once") || strings.Contains(e, "choice") || strings.Contains(e, `"request"`) {
		t.Fatalf("journal entry leaks the request: %s", e)
	}
}

// acceptance 121, 122, 123, 124
func TestApprovalChoiceAndRequestID(t *testing.T) {
	badChoice := hermesErr("Invalid approval choice; expected one of: always, deny, once, session", "invalid_approval_choice")
	badID := hermesErr("Approval request_id is invalid.", "invalid_approval_request")
	cases := []struct {
		body   string
		status int
		want   string // "" = resolved with this choice: see choice
		choice string
	}{
		// acceptance 121
		{`{"choice":"approve"}`, 200, "", "once"},
		{`{"choice":"approved"}`, 200, "", "once"},
		{`{"choice":"allow"}`, 200, "", "once"},
		{`{"choice":" ONCE "}`, 200, "", "once"},
		{`{"choice":"\tSession\n"}`, 200, "", "session"},
		{`{"choice":"always"}`, 200, "", "always"},
		{`{"choice":"DENY"}`, 200, "", "deny"},
		// acceptance 122
		{`{"choice":"maybe"}`, 400, badChoice, ""},
		{`{}`, 400, badChoice, ""},
		{`{"choice":1}`, 400, badChoice, ""},
		{`{"choice":null}`, 400, badChoice, ""},
		{`{"choice":"Approve "}`, 200, "", "once"},
		// acceptance 123
		{`{"choice":"once","request_id":""}`, 400, badID, ""},
		{`{"choice":"once","request_id":"   "}`, 400, badID, ""},
		{`{"choice":"once","request_id":"` + strings.Repeat("r", 257) + `"}`, 400, badID, ""},
		{`{"choice":"once","request_id":5}`, 400, badID, ""},
		{`{"choice":"once","request_id":null}`, 200, "", "once"},
		// acceptance 124: request_id is checked before the choice.
		{`{"choice":"bad","request_id":""}`, 400, badID, ""},
		{`{"request_id":[]}`, 400, badID, ""},
	}
	x := newH(t, emulator.Options{})
	id := x.start()
	x.apprWait(id, "")
	for _, c := range cases {
		r := x.apprPost(id, c.body)
		want := c.want
		if c.status == 200 {
			want = apprOK(id, c.choice, "", 1)
		}
		if r.Status != c.status || string(r.Body) != want {
			t.Fatalf("%s: got %d %s\nwant %d %s", c.body, r.Status, r.Body, c.status, want)
		}
		if c.status == 200 {
			x.apprWait(id, "") // a fresh pending entry for the next case
		}
	}
	// The failures resolved nothing: exactly one entry is pending.
	x.want(x.apprPost(id, `{"choice":"once","all":true}`), 200, apprOK(id, "once", "", 1))
	// A request_id of 256 characters is valid (and stripped).
	rid := strings.Repeat("r", 256)
	x.apprWait(id, `{"request_id":"`+rid+`"}`)
	x.want(x.apprPost(id, `{"choice":"once","request_id":" `+rid+` "}`), 200, apprOK(id, "once", rid, 1))
}

// acceptance 125
func TestApprovalBodies(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	x.apprWait(id, "")
	for _, b := range []string{`{`, ``, `{"choice":"once"} x`} {
		x.want(x.apprPost(id, b), 400, hermesErr("Invalid JSON", ""))
	}
	for _, b := range []string{`[]`, `"once"`, `null`, `1`} {
		x.want(x.apprPost(id, b), 501, unsupportedErr("non-object approval bodies are outside the verified subset"))
	}
	// Body errors come before the live check: a terminal run still answers 400.
	done := x.start()
	x.want(x.observe(done, `{"status":"completed"}`), 200, "")
	x.want(x.apprPost(done, `{`), 400, hermesErr("Invalid JSON", ""))
	x.want(x.apprPost("missing", `{`), 404, hermesErr("Run not found: missing", "run_not_found"))
}

// acceptance 126, 127, 128
func TestApprovalQueue(t *testing.T) {
	notPending := func(id string) string { return hermesErr("Run has no pending approval: "+id, "approval_not_pending") }
	t.Run("fifo", func(t *testing.T) {
		x := newH(t, emulator.Options{})
		id := x.start()
		x.apprWait(id, "")
		x.apprWait(id, "")
		x.want(x.apprPost(id, `{"choice":"once"}`), 200, apprOK(id, "once", "", 1))
		x.want(x.apprPost(id, `{"choice":"deny"}`), 200, apprOK(id, "deny", "", 1))
		x.want(x.apprPost(id, `{"choice":"once"}`), 409, notPending(id))
	})
	t.Run("oldest first", func(t *testing.T) {
		x := newH(t, emulator.Options{})
		id := x.start()
		older := x.apprWait(id, "")
		newer := x.apprWait(id, "")
		x.want(x.apprPost(id, `{"choice":"once"}`), 200, apprOK(id, "once", "", 1))
		x.want(x.apprPost(id, `{"choice":"once","request_id":"`+older+`"}`), 409, notPending(id))
		x.want(x.apprPost(id, `{"choice":"once","request_id":"`+newer+`"}`), 200, apprOK(id, "once", newer, 1))
	})
	t.Run("by request_id", func(t *testing.T) { // acceptance 127
		x := newH(t, emulator.Options{})
		x.freeze()
		id := x.start()
		first := x.apprWait(id, `{"command":"a"}`)
		second := x.apprWait(id, `{"command":"b"}`)
		if first == second {
			t.Fatalf("request ids %s %s", first, second)
		}
		s, _, _ := x.sseOpen(id)
		s.next()
		s.next() // the two approval.request frames
		// resolve_all is ignored with a request_id.
		x.want(x.apprPost(id, `{"choice":"session","request_id":"`+second+`","all":true}`), 200, apprOK(id, "session", second, 1))
		s.want(sseFrame(`{"event": "approval.responded", "run_id": "` + id + `", "timestamp": 1700000000.0, "choice": "session", "request_id": "` + second + `", "resolved": 1}`))
		x.want(x.apprPost(id, `{"choice":"once","request_id":"`+second+`"}`), 409, notPending(id))
		x.want(x.apprPost(id, `{"choice":"once","request_id":"`+first+`"}`), 200, apprOK(id, "once", first, 1))
		x.want(x.apprPost(id, `{"choice":"once"}`), 409, notPending(id))
	})
	// acceptance 128
	for _, c := range []struct {
		extra    string
		resolved int
	}{
		{`"all":true`, 2}, {`"resolve_all":"yes"`, 2}, {`"all":"false"`, 1}, {`"all":" ON "`, 2},
		{`"all":1`, 2}, {`"all":0`, 1}, {`"all":null,"resolve_all":"1"`, 2}, {`"all":{},"resolve_all":[1]`, 1},
		{`"resolve_all":"TRUE"`, 2}, {`"resolve_all":false`, 1}, {`"all":0.5`, 2},
	} {
		t.Run("all "+c.extra, func(t *testing.T) {
			x := newH(t, emulator.Options{})
			id := x.start()
			x.apprWait(id, "")
			x.apprWait(id, "")
			x.want(x.apprPost(id, `{"choice":"once",`+c.extra+`}`), 200, apprOK(id, "once", "", c.resolved))
			if c.resolved == 1 {
				x.want(x.apprPost(id, `{"choice":"once"}`), 200, apprOK(id, "once", "", 1))
			}
			x.want(x.apprPost(id, `{"choice":"once"}`), 409, notPending(id))
		})
	}
}

// acceptance 129, 130, 131
func TestApprovalNotActiveOrPending(t *testing.T) {
	x := newH(t, emulator.Options{})
	notActive := func(id string) string {
		return hermesErr("Run has no active approval session: "+id, "approval_not_active")
	}
	done := x.start()
	x.apprWait(done, "")
	x.want(x.observe(done, `{"status":"completed"}`), 200, "")
	x.want(x.apprPost(done, `{"choice":"once"}`), 409, notActive(done))
	// A bad choice (400) wins over the 409.
	x.want(x.apprPost(done, `{"choice":"x"}`), 400, "")

	// acceptance 130
	running := x.start()
	x.want(x.observe(running, `{"status":"running"}`), 200, "")
	x.want(x.apprPost(running, `{"choice":"once"}`), 409, hermesErr("Run has no pending approval: "+running, "approval_not_pending"))

	// acceptance 131
	stopped := x.start()
	x.apprWait(stopped, "")
	x.want(x.post("/v1/runs/"+stopped+"/stop", ""), 200, "")
	x.want(x.apprPost(stopped, `{"choice":"once"}`), 409, hermesErr("Run has no pending approval: "+stopped, "approval_not_pending"))

	// Another status observed empties the queue too (controls §11.1 step 11).
	moved := x.start()
	x.apprWait(moved, "")
	x.want(x.observe(moved, `{"status":"running"}`), 200, "")
	x.want(x.apprPost(moved, `{"choice":"once"}`), 409, hermesErr("Run has no pending approval: "+moved, "approval_not_pending"))

	// acceptance 129: a waiting run after restart alive is not live here.
	r := x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "k")
	x.want(r, 202, "")
	waiting := r.field(t, "run_id")
	x.apprWait(waiting, "")
	x.want(x.restart("alive"), 200, "")
	x.want(x.apprPost(waiting, `{"choice":"once"}`), 409, notActive(waiting))
	if st := x.get("/v1/runs/"+waiting).field(t, "status"); st != "waiting_for_approval" {
		t.Fatalf("status after restart alive: %s", st)
	}
}

// acceptance 132
func TestApprovalChoices(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	for _, c := range [][2]string{
		{`{"smart_denied":true}`, `["once","deny"]`},
		{`{"smart_denied":1,"allow_permanent":false}`, `["once","deny"]`},
		{`{"allow_session":false}`, `["once","deny"]`},
		{`{"allow_session":0}`, `["once","session","always","deny"]`},
		{`{"allow_permanent":false}`, `["once","session","deny"]`},
		{`{"smart_denied":false,"allow_session":true}`, `["once","session","always","deny"]`},
		{`{}`, `["once","session","always","deny"]`},
	} {
		x.apprWait(id, c[0])
		r := x.get("/v1/runs/" + id)
		var rec struct {
			Approval struct{ Choices json.RawMessage }
		}
		if err := json.Unmarshal(r.Body, &rec); err != nil || string(rec.Approval.Choices) != c[1] {
			t.Fatalf("%s: choices %s, want %s (%s)", c[0], rec.Approval.Choices, c[1], r.Body)
		}
	}
}

// acceptance 133, and the approval object's key order (runs-api §6.5.1).
func TestApprovalObserveRequestID(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	r := x.observe(id, `{"status":"waiting_for_approval","approval":{"choices":[],"request_id":"r1","x":1,"event":"e"}}`)
	x.want(r, 200, `{"object":"hermes.run","run_id":"`+id+`","status":"waiting_for_approval","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"approval.request",`+
		`"approval":{"choices":["once","session","always","deny"],"request_id":"r1","x":1,"event":"approval.request","run_id":"`+id+`","timestamp":1700000000.0}}`)
	x.want(x.observe(id, `{"status":"waiting_for_approval","approval":{"request_id":"r1"}}`), 400,
		hermesErr("observe: approval request_id is already pending", ""))
	for _, bad := range []string{`""`, `" r2"`, `5`, `"` + strings.Repeat("r", 257) + `"`} {
		x.want(x.observe(id, `{"status":"waiting_for_approval","approval":{"request_id":`+bad+`}}`), 400,
			hermesErr("observe: approval request_id must be a nonempty trimmed string of at most 256 characters", ""))
	}
	// Once resolved, the id may be used again.
	x.want(x.apprPost(id, `{"choice":"once","request_id":"r1"}`), 200, apprOK(id, "once", "r1", 1))
	x.apprWait(id, `{"request_id":"r1"}`)
}

// acceptance 134
func TestApprovalGeneratedIDPerNamespace(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "a"
	id := x.start()
	if got := x.apprWait(id, `{"command":"c"}`); got != "6d39726f333372366a76576b73653944" {
		t.Fatalf("first request_id of namespace a: %s", got)
	}
	x.ns = ""
	id = x.start()
	if got := x.apprWait(id, ""); got != "4f517459436b5145434675544552396b" {
		t.Fatalf("first request_id of default: %s", got)
	}
}
