package emulator_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Acceptance section N (timeline, controls.md §8) through the full HTTP stack.

var cpID = regexp.MustCompile(`^cp_[0-9a-z]{8}$`)

// tlCheckpoint commits a checkpoint on main of the harness namespace and
// returns its id.
func tlCheckpoint(x *h) string {
	x.t.Helper()
	r := x.post("/__admin/checkpoints", "")
	x.want(r, 201, "")
	id := r.field(x.t, "id")
	if !cpID.MatchString(id) {
		x.t.Fatalf("checkpoint id %q", id)
	}
	return id
}

// tlCheckout checks out cp on main of the harness namespace.
func tlCheckout(x *h, cp string) {
	x.t.Helper()
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+cp+`"}`), 200,
		`{"status":"ok","branch":"main","checkpoint":"`+cp+`"}`)
}

// tlQueued is the queued record of run id at the frozen base.
func tlQueued(id string) string {
	return `{"object":"hermes.run","run_id":"` + id + `","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + id + `","model":"hermes-agent"}`
}

// acceptance 181
func TestTimelineCheckoutIsolation(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.ns = "a"
	r := x.post("/v1/runs", `{"input":"synthetic prompt"}`)
	x.want(r, 202, `{"run_id":"`+runA1+`","status":"started","replayed":false}`)
	x.ns = "b"
	x.want(x.get("/v1/runs/"+runA1), 404, hermesErr("Run not found: "+runA1, "run_not_found"))
	x.want(x.observe(runA1, `{"status":"completed"}`), 404, hermesErr("Run not found: "+runA1, "run_not_found"))
	x.ns = "a"
	cp := tlCheckpoint(x)
	x.want(x.observe(runA1, `{"status":"completed","output":"synthetic-result-private"}`), 200, "")
	r = x.get("/v1/runs/" + runA1)
	x.want(r, 200, "")
	if !strings.Contains(string(r.Body), `"output":"synthetic-result-private"`) {
		t.Fatalf("completed record %s", r.Body)
	}
	tlCheckout(x, cp)
	x.want(x.get("/v1/runs/"+runA1), 200, tlQueued(runA1))
	j := x.get("/__admin/requests")
	x.want(j, 200, "")
	if n := len(ctlEntries(x, "")); n != 3 {
		t.Fatalf("journal of a has %d entries: %s", n, j.Body)
	}
	for _, s := range []string{"synthetic prompt", "synthetic-result-private"} {
		if strings.Contains(string(j.Body), s) {
			t.Fatalf("journal of a contains %q: %s", s, j.Body)
		}
	}
}

// acceptance 182
func TestTimelineCheckoutClock(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.ns = "b"
	x.start() // b: cp_00000001 (initial), cp_00000002
	x.ns = "a"
	x.start() // a: cp_00000001 (initial), cp_00000002, cp_00000003
	x.start()
	r := x.post("/__admin/checkpoints", "")
	x.want(r, 201, `{"id":"cp_00000004","branch":"main","parent":"cp_00000003","at":1700000000000,"records":5}`)
	x.want(x.observe(runA1, `{"status":"running"}`), 200, "")
	x.advance("60000")
	x.ns = "b"
	x.want(x.observe(runB1, `{"status":"running"}`), 200, "") // b: cp_00000003
	x.ns = "a"
	tlCheckout(x, "cp_00000004")
	x.want(x.get("/v1/runs/"+runA1), 200, tlQueued(runA1))
	if now := ctlClock(x, x.get("/__admin/clock")); now != 1700000000000 {
		t.Fatalf("clock after checkout = %v", now)
	}
	x.ns = "b"
	r = x.get("/v1/runs/" + runB1)
	x.want(r, 200, "")
	if r.field(t, "status") != "running" {
		t.Fatalf("b was touched: %s", r.Body)
	}
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"cp_00000004"}`), 409, adminErr("no checkpoint cp_00000004"))
	r = x.get("/v1/runs/" + runB1)
	if r.field(t, "status") != "running" {
		t.Fatalf("a failed checkout changed b: %s", r.Body)
	}
}

// acceptance 183
func TestTimelineCheckpointHeaders(t *testing.T) {
	x := newH(t, emulator.Options{})
	seen := map[string]bool{}
	has := func(name string, r res, status int) {
		t.Helper()
		if r.Status != status {
			t.Fatalf("%s: %d %s, want %d", name, r.Status, r.Body, status)
		}
		cp := r.Header.Get("X-Mockingbird-Checkpoint")
		if !cpID.MatchString(cp) || seen[cp] {
			t.Fatalf("%s: checkpoint %q (seen %v)", name, cp, seen)
		}
		seen[cp] = true
		if head := fltHead(x); head != cp {
			t.Fatalf("%s: checkpoint %s, main head %s", name, cp, head)
		}
	}
	none := func(name string, r res, status int) {
		t.Helper()
		if r.Status != status {
			t.Fatalf("%s: %d %s, want %d", name, r.Status, r.Body, status)
		}
		if v, ok := r.Header["X-Mockingbird-Checkpoint"]; ok {
			t.Fatalf("%s: carries a checkpoint %q", name, v)
		}
	}
	key := []string{"Idempotency-Key", "k"}
	has("new start", x.post("/v1/runs", `{"input":"synthetic"}`, key...), 202)
	has("replay", x.post("/v1/runs", `{"input":"synthetic"}`, key...), 202)
	has("replay again", x.post("/v1/runs", `{"input":"synthetic"}`, key...), 202)
	has("stop", x.post("/v1/runs/"+run1+"/stop", ""), 200)
	id := x.start()
	none("observe (admin)", x.observe(id, `{"status":"waiting_for_approval"}`), 200)
	has("approval", x.post("/v1/runs/"+id+"/approval", `{"choice":"once"}`), 200)
	has("steer", x.post("/v1/runs/"+id+"/steer", `{"input":"synthetic"}`), 200)
	none("observe cancelled (admin)", x.observe(run1, `{"status":"cancelled"}`), 200)
	has("stop of a terminal run", x.post("/v1/runs/"+run1+"/stop", ""), 200)
	none("poll", x.get("/v1/runs/"+id), 200)
	none("capabilities", x.get("/v1/capabilities"), 200)
	none("poll 404", x.get("/v1/runs/missing"), 404)
	none("start 400", x.post("/v1/runs", `{`), 400)
	none("start 409", x.post("/v1/runs", `{"input":"other"}`, key...), 409)
	none("stop 404", x.post("/v1/runs/missing/stop", ""), 404)
	none("approval 409", x.post("/v1/runs/"+id+"/approval", `{"choice":"once"}`), 409)
	none("page not found", x.post("/v1/runs/"+id+"/nope", ""), 404)
	none("checkpoint admin", x.post("/__admin/checkpoints", ""), 201)
	x.want(x.post("/__admin/faults", `{"operationId":"RunStop","status":200,"body":{"ok":true},"count":1}`), 201, "")
	none("fault 200", x.post("/v1/runs/"+id+"/stop", ""), 200)
	x.want(x.post("/__admin/faults", `{"operationId":"RunCreate","status":202,"count":1}`), 201, "")
	none("fault 202", x.post("/v1/runs", `{"input":"synthetic"}`), 202)
}

// acceptance 184
func TestTimelineIDs(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.ns = "fresh"
	x.want(x.post("/__admin/checkpoints", ""), 201, `{"id":"cp_00000002","branch":"main","parent":"cp_00000001","at":1700000000000,"records":0}`)
	for _, want := range []string{"cp_00000003", "cp_00000004", "cp_00000005", "cp_00000006", "cp_00000007", "cp_00000008", "cp_00000009", "cp_0000000a", "cp_0000000b"} {
		if got := tlCheckpoint(x); got != want {
			t.Fatalf("checkpoint %s, want %s", got, want)
		}
	}
	x.want(x.post("/__admin/checkpoints", `{"branch":"side"}`), 201, "")
	x.advance("5")
	x.want(x.post("/__admin/checkpoints", `{"branch":"side"}`), 201, `{"id":"cp_0000000e","branch":"side","parent":"cp_0000000d","at":1700000000005,"records":0}`)
	var cps []string
	ids := []string{"cp_00000001", "cp_00000002", "cp_00000003", "cp_00000004", "cp_00000005", "cp_00000006", "cp_00000007", "cp_00000008", "cp_00000009", "cp_0000000a", "cp_0000000b"}
	for i, id := range ids {
		parent := "null"
		if i > 0 {
			parent = `"` + ids[i-1] + `"`
		}
		cps = append(cps, `{"id":"`+id+`","branch":"main","parent":`+parent+`,"at":1700000000000}`)
	}
	// The side branch starts at a new main checkpoint (cp_0000000c, controls §8.3/§8.4).
	cps = append(cps, `{"id":"cp_0000000c","branch":"main","parent":"cp_0000000b","at":1700000000000}`,
		`{"id":"cp_0000000d","branch":"side","parent":"cp_0000000c","at":1700000000000}`,
		`{"id":"cp_0000000e","branch":"side","parent":"cp_0000000d","at":1700000000005}`)
	x.want(x.get("/__admin/timeline"), 200, `{"branches":{"main":"cp_0000000c","side":"cp_0000000e"},"checkpoints":[`+strings.Join(cps, ",")+`]}`)
	// Another namespace's timeline is its own.
	x.ns = "other"
	x.want(x.get("/__admin/timeline"), 200, `{"branches":{"main":"cp_00000001"},"checkpoints":[{"id":"cp_00000001","branch":"main","parent":null,"at":1700000000005}]}`)
}

// acceptance 185
func TestTimelineBranchHeader(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	const feat1 = "run_52676a54676b33764f30706a7170455a" // first run of branch feature of default (runs-api §12.1)
	br := []string{"X-Mockingbird-Branch", "feature"}
	r := x.post("/v1/runs", `{"input":"synthetic"}`, br...)
	x.want(r, 202, `{"run_id":"`+feat1+`","status":"started","replayed":false}`)
	if got := r.Header.Get("X-Mockingbird-Branch"); got != "feature" {
		t.Fatalf("branch echo %q", got)
	}
	if !cpID.MatchString(r.Header.Get("X-Mockingbird-Checkpoint")) {
		t.Fatalf("branch start checkpoint %q", r.Header.Get("X-Mockingbird-Checkpoint"))
	}
	r = x.get("/v1/runs/"+feat1, br...)
	x.want(r, 200, tlQueued(feat1))
	if got := r.Header.Get("X-Mockingbird-Branch"); got != "feature" {
		t.Fatalf("branch echo %q", got)
	}
	r = x.get("/v1/runs/" + feat1)
	x.want(r, 404, hermesErr("Run not found: "+feat1, "run_not_found"))
	if v, ok := r.Header["X-Mockingbird-Branch"]; ok {
		t.Fatalf("main response echoes a branch %q", v)
	}
	// main's own counter is untouched by the branch.
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`)
	x.want(x.get("/v1/runs/"+run1, br...), 404, hermesErr("Run not found: "+run1, "run_not_found"))
}

// acceptance 186
func TestTimelineAtHeader(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	c := tlCheckpoint(x)
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	head := fltHead(x)
	r := x.get("/v1/runs/"+id, "X-Mockingbird-At", c)
	x.want(r, 200, tlQueued(id))
	if got := r.Header.Get("X-Mockingbird-At"); got != c {
		t.Fatalf("at echo %q, want %q", got, c)
	}
	if v, ok := r.Header["X-Mockingbird-Checkpoint"]; ok {
		t.Fatalf("read-only view carries a checkpoint %q", v)
	}
	r = x.get("/v1/runs/" + id)
	x.want(r, 200, "")
	if r.field(t, "status") != "completed" {
		t.Fatalf("plain GET %s", r.Body)
	}
	if got := fltHead(x); got != head {
		t.Fatalf("a read-only view moved main: %s → %s", head, got)
	}
	// An unknown checkpoint is a 409 admin envelope (runs-api §3 step 5).
	r = x.get("/v1/runs/"+id, "X-Mockingbird-At", "cp_00000099")
	x.want(r, 409, adminErr("no checkpoint cp_00000099"))
	if got := r.Header.Get("X-Mockingbird-At"); got != "cp_00000099" {
		t.Fatalf("at echo on 409 %q", got)
	}
}

// acceptance 187
func TestTimelineCheckoutBody(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, body := range []string{`{}`, ``, `{"checkpoint":1}`, `"cp_00000001"`, `{"checkpoint":null}`} {
		x.want(x.post("/__admin/branches/main/checkout", body), 400, adminErr(`expected {"checkpoint":"cp_..."}`))
	}
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"cp_00000099"}`), 409, adminErr("no checkpoint cp_00000099"))
}

// controls §8.3–§8.4: the optional body of POST /__admin/checkpoints and POST
// /__admin/branches/:name is an object (admin.yaml); [1], "x", null or 3 are
// refused with 400, nothing committed, not taken as no body.
func TestTimelineBodyNotObject(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, body := range []string{`[1]`, `"x"`, `null`, `3`} {
		x.want(x.post("/__admin/checkpoints", body), 400, adminErr(`expected {"branch":"..."} or no body`))
		x.want(x.post("/__admin/branches/b", body), 400, adminErr(`expected {"at":"cp_..."} or no body`))
	}
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":[]}`)
}

// A branch "at" that is not a string is quoted in the 409, cut to
// runs.EchoLimit bytes (H9).
func TestBranchAtEcho(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/__admin/branches/b", `{"at":[1,2]}`), 409, adminErr("no checkpoint [1,2]"))
	long := "[" + strings.Repeat("1,", 2000) + "1]"
	x.want(x.post("/__admin/branches/b", `{"at":`+long+`}`), 409, adminErr("no checkpoint "+long[:1024]))
}

// acceptance 188
func TestTimelineSnapshots(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "a"
	x.start()
	x.want(x.post("/__admin/snapshots", ""), 201, `{"id":"snap_1","namespace":"a","records":3}`)
	x.ns = "b"
	x.want(x.post("/__admin/snapshots/snap_1/restore", ""), 409, adminErr("snapshot snap_1 belongs to namespace a"))
	x.want(x.post("/__admin/snapshots/snap_9/restore", ""), 404, adminErr("no snapshot snap_9"))
	x.ns = "a"
	x.want(x.observe(runA1, `{"status":"running"}`), 200, "")
	x.want(x.post("/__admin/snapshots/snap_1/restore", ""), 200, `{"status":"ok","id":"snap_1","namespace":"a"}`)
	if r := x.get("/v1/runs/" + runA1); r.field(t, "status") != "queued" {
		t.Fatalf("restore: %s", r.Body)
	}
	x.want(x.do("DELETE", "/__admin/snapshots/snap_1", ""), 200, `{"status":"ok"}`)
	x.want(x.do("DELETE", "/__admin/snapshots/snap_1", ""), 404, adminErr("no snapshot snap_1"))
	// The counter is process-wide: the next snapshot (in b) is snap_2.
	x.ns = "b"
	x.want(x.post("/__admin/snapshots", ""), 201, `{"id":"snap_2","namespace":"b","records":0}`)
}

// controls §8.3–§8.4: bad branch names and unknown checkpoints are 409 admin
// envelopes; POST /__admin/branches/:name starts a branch at a checkpoint.
func TestTimelineBranches(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.want(x.post("/__admin/checkpoints", `{"branch":"bad name"}`), 409, adminErr("branch must match /^[A-Za-z0-9_.-]{1,64}$/"))
	x.want(x.post("/__admin/branches/bad%20name", ""), 409, adminErr("branch must match /^[A-Za-z0-9_.-]{1,64}$/"))
	x.want(x.post("/__admin/branches/f", `{"at":"cp_00000099"}`), 409, adminErr("no checkpoint cp_00000099"))
	id := x.start() // main: cp_00000001, cp_00000002
	x.want(x.post("/__admin/branches/f", `{"at":"cp_00000001"}`), 201, `{"id":"cp_00000001","branch":"f","parent":null,"at":1700000000000}`)
	br := []string{"X-Mockingbird-Branch", "f"}
	x.want(x.get("/v1/runs/"+id, br...), 404, hermesErr("Run not found: "+id, "run_not_found"))
	x.want(x.post("/__admin/branches/g", ""), 201, `{"id":"cp_00000003","branch":"g","parent":"cp_00000002","at":1700000000000}`)
	x.want(x.get("/v1/runs/"+id, "X-Mockingbird-Branch", "g"), 200, tlQueued(id))
	x.want(x.get("/v1/runs/"+id, "X-Mockingbird-Branch", "bad name"), 400, adminErr("x-mockingbird-branch must match /^[A-Za-z0-9_.-]{1,64}$/"))
}

// controls §8.6: x-mockingbird-at on a mutating main request first moves main
// to the checkpoint (state and clock), then runs the request.
func TestTimelineAtMutation(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	c := fltHead(x) // cp_00000001: empty
	id := x.start()
	x.advance("5000")
	r := x.post("/v1/runs", `{"input":"synthetic"}`, "X-Mockingbird-At", c)
	x.want(r, 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`) // the counter was rewound
	if r.Header.Get("X-Mockingbird-At") != c || !cpID.MatchString(r.Header.Get("X-Mockingbird-Checkpoint")) {
		t.Fatalf("headers %v", r.Header)
	}
	if now := ctlClock(x, x.get("/__admin/clock")); now != 1700000000000 {
		t.Fatalf("clock = %v", now)
	}
	x.want(x.get("/v1/runs/"+id), 200, tlQueued(id))
}

// controls §8.1: at most --max-checkpoints are kept; the oldest that are not a
// head or pinned go first.
func TestTimelineRetention(t *testing.T) {
	x := newH(t, emulator.Options{MaxCheckpoints: 3})
	x.freeze()
	x.want(x.post("/__admin/snapshots", ""), 201, `{"id":"snap_1","namespace":"default","records":0}`) // pins cp_00000002
	for i := 0; i < 3; i++ {
		tlCheckpoint(x) // cp_00000003 … cp_00000005
	}
	x.want(x.get("/__admin/timeline"), 200, `{"branches":{"main":"cp_00000005"},"checkpoints":[`+
		`{"id":"cp_00000002","branch":"main","parent":"cp_00000001","at":1700000000000},`+
		`{"id":"cp_00000004","branch":"main","parent":"cp_00000003","at":1700000000000},`+
		`{"id":"cp_00000005","branch":"main","parent":"cp_00000004","at":1700000000000}]}`)
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"cp_00000003"}`), 409, adminErr("no checkpoint cp_00000003"))
	x.want(x.post("/__admin/snapshots/snap_1/restore", ""), 200, `{"status":"ok","id":"snap_1","namespace":"default"}`)
}
