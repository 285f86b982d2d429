package emulator_test

// Acceptance sections C (idempotency, items 35–54) and D (fingerprint, items
// 55–58) through the full HTTP stack (runs-api §6.1, §7, §8).

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"

	_ "modernc.org/sqlite" // read the reservation table of a --db file (acceptance 55, 58)
)

const (
	idemRun2         = "run_57703349705258663741626769756c5a"
	idemConflict     = "Idempotency-Key was already used with a different request payload"
	idemInvalidKey   = "Idempotency-Key must be 1-255 visible ASCII characters"
	idemSyntheticReq = `{"input":"synthetic"}`
)

// idemReplay is the 202 body of a replay.
func idemReplay(id, status string) string {
	return `{"run_id":"` + id + `","status":"` + status + `","replayed":true}`
}

// idemWantReplay checks a replay: 202, exact body and Idempotency-Replayed: true.
func idemWantReplay(x *h, r res, id, status string) {
	x.t.Helper()
	x.want(r, 202, idemReplay(id, status))
	if got := r.Header.Values("Idempotency-Replayed"); len(got) != 1 || got[0] != "true" {
		x.t.Fatalf("Idempotency-Replayed = %q", got)
	}
}

// idemWantNew checks a new admission (202 started, no replay header) and returns its id.
func idemWantNew(x *h, r res) string {
	x.t.Helper()
	if r.Status != 202 {
		x.t.Fatalf("want a new run, got %d %s", r.Status, r.Body)
	}
	id := r.field(x.t, "run_id")
	x.want(r, 202, admStarted(id))
	if _, ok := r.Header["Idempotency-Replayed"]; ok {
		x.t.Fatalf("Idempotency-Replayed on a new run: %v", r.Header)
	}
	return id
}

func idemConflictErr() string { return hermesErr(idemConflict, "idempotency_key_conflict") }

// acceptance 35
func TestC35Replay(t *testing.T) {
	x := newH(t, emulator.Options{})
	key := []string{"Idempotency-Key", "delivery"}
	x.want(x.post("/v1/runs", idemSyntheticReq, key...), 202, admStarted(run1))
	idemWantReplay(x, x.post("/v1/runs", idemSyntheticReq, key...), run1, "queued")
}

// acceptance 36
func TestC36ConflictKeepsReservation(t *testing.T) {
	x := newH(t, emulator.Options{})
	key := []string{"Idempotency-Key", "delivery"}
	x.want(x.post("/v1/runs", idemSyntheticReq, key...), 202, admStarted(run1))
	x.want(x.post("/v1/runs", `{"input":"different"}`, key...), 409, idemConflictErr())
	idemWantReplay(x, x.post("/v1/runs", idemSyntheticReq, key...), run1, "queued")
	// Exactly one run was stored: the next creation takes the second id.
	if id := x.start(); id != idemRun2 {
		t.Fatalf("next id %s, want %s (only one run stored)", id, idemRun2)
	}
}

// acceptance 37: concurrent identical keyed submissions reserve exactly one run.
func TestC37ConcurrentSubmissions(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		t.Run(fmt.Sprintf("inproc=%v", inproc), func(t *testing.T) {
			srv := newH(t, emulator.Options{}).srv
			const n = 24
			type answer struct {
				status int
				body   []byte
				err    error
			}
			out := make([]answer, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					req, err := http.NewRequest("POST", srv.URL()+"/v1/runs", strings.NewReader(idemSyntheticReq))
					if inproc {
						req, err = http.NewRequest("POST", "http://emulator/v1/runs", strings.NewReader(idemSyntheticReq))
					}
					if err != nil {
						out[i].err = err
						return
					}
					req.Header.Set("Idempotency-Key", "concurrent")
					if inproc {
						rec := newIdemRecorder()
						srv.Handler().ServeHTTP(rec, req)
						out[i] = answer{rec.code, rec.buf.Bytes(), nil}
						return
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						out[i].err = err
						return
					}
					defer resp.Body.Close()
					b, err := io.ReadAll(resp.Body)
					out[i] = answer{resp.StatusCode, b, err}
				}()
			}
			close(start)
			wg.Wait()
			ids, fresh := map[string]bool{}, 0
			for i, a := range out {
				if a.err != nil || a.status != 202 {
					t.Fatalf("submission %d: %d %s %v", i, a.status, a.body, a.err)
				}
				var v struct {
					RunID    string `json:"run_id"`
					Status   string `json:"status"`
					Replayed bool   `json:"replayed"`
				}
				if err := json.Unmarshal(a.body, &v); err != nil {
					t.Fatalf("submission %d: %s", i, a.body)
				}
				ids[v.RunID] = true
				if !v.Replayed {
					fresh++
					if string(a.body) != admStarted(v.RunID) {
						t.Errorf("new body %s", a.body)
					}
				} else if string(a.body) != idemReplay(v.RunID, "queued") {
					t.Errorf("replay body %s", a.body)
				}
			}
			if len(ids) != 1 || fresh != 1 || !ids[run1] {
				t.Fatalf("ids %v, %d replayed:false; want exactly %s once new", ids, fresh, run1)
			}
		})
	}
}

// idemRecorder is a goroutine-local response recorder (httptest.ResponseRecorder
// needs the testing import only for construction; this keeps the goroutine free
// of *testing.T).
type idemRecorder struct {
	h    http.Header
	code int
	buf  bytes.Buffer
}

func newIdemRecorder() *idemRecorder { return &idemRecorder{h: http.Header{}} }

func (r *idemRecorder) Header() http.Header { return r.h }
func (r *idemRecorder) WriteHeader(c int) {
	if r.code == 0 {
		r.code = c
	}
}
func (r *idemRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.buf.Write(b)
}

// acceptance 38 and 39: object key order never matters; values, array order and
// the memory key do.
func TestC38C39FingerprintThroughKeys(t *testing.T) {
	x := newH(t, emulator.Options{})
	hdr := []string{"Idempotency-Key", "a", "X-Hermes-Session-Key", "memory"}
	r := x.post("/v1/runs", `{"input":"synthetic","extra":{"b":2,"a":1},"items":[1,2]}`, hdr...)
	id := idemWantNew(x, r)
	if got := r.Header.Get("X-Hermes-Session-Key"); got != "memory" {
		t.Fatalf("new: X-Hermes-Session-Key = %q", got)
	}
	r = x.post("/v1/runs", `{"items":[1,2],"extra":{"a":1,"b":2},"input":"synthetic"}`, hdr...)
	idemWantReplay(x, r, id, "queued")
	if got := r.Header.Values("X-Hermes-Session-Key"); len(got) != 1 || got[0] != "memory" {
		t.Fatalf("replay: X-Hermes-Session-Key = %q", got)
	}
	// acceptance 39
	for _, c := range []struct{ body, memory string }{
		{`{"input":"synthetic","extra":{"b":3,"a":1},"items":[1,2]}`, "memory"},
		{`{"input":"synthetic","extra":{"b":2,"a":1},"items":[2,1]}`, "memory"},
		{`{"input":"synthetic","extra":{"b":2,"a":1},"items":[1,2]}`, "different"},
	} {
		r := x.post("/v1/runs", c.body, "Idempotency-Key", "a", "X-Hermes-Session-Key", c.memory)
		if r.Status != 409 || string(r.Body) != idemConflictErr() {
			t.Errorf("%s memory %s: %d %s", c.body, c.memory, r.Status, r.Body)
		}
		if _, ok := r.Header["X-Hermes-Session-Key"]; ok {
			t.Errorf("memory key echoed on an error: %v", r.Header)
		}
	}
}

// acceptance 40 and 50: number lexemes as CPython reads them.
func TestC40NumberLexemes(t *testing.T) {
	tests := []struct {
		a, b   string
		replay bool
	}{
		{"1", "1.0", false},
		{"1.0", "1e0", true},
		{"-0", "0", true},
		{"-0.0", "0.0", false},
		{"9007199254740992", "9007199254740993", false},
		{"1e20", "100000000000000000000.0", true},
	}
	x := newH(t, emulator.Options{})
	for i, tc := range tests {
		key := []string{"Idempotency-Key", fmt.Sprintf("pair-%d", i)}
		id := idemWantNew(x, x.post("/v1/runs", `{"input":"synthetic","n":`+tc.a+`}`, key...))
		r := x.post("/v1/runs", `{"input":"synthetic","n":`+tc.b+`}`, key...)
		switch {
		case tc.replay && (r.Status != 202 || string(r.Body) != idemReplay(id, "queued")):
			t.Errorf("%s then %s: got %d %s, want a replay", tc.a, tc.b, r.Status, r.Body)
		case !tc.replay && (r.Status != 409 || string(r.Body) != idemConflictErr()):
			t.Errorf("%s then %s: got %d %s, want 409", tc.a, tc.b, r.Status, r.Body)
		}
	}
	// acceptance 50
	key := []string{"Idempotency-Key", "hono"}
	idemWantNew(x, x.post("/v1/runs", `{"input":"synthetic","n":1}`, key...))
	x.want(x.post("/v1/runs", `{"input":"synthetic","n":1.0}`, key...), 409, idemConflictErr())
}

// acceptance 41: session_id is part of the payload; bearer text is not (no --api-key).
func TestC41SessionAndBearer(t *testing.T) {
	x := newH(t, emulator.Options{})
	key := []string{"Idempotency-Key", "k"}
	id := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, key...))
	x.want(x.post("/v1/runs", `{"input":"synthetic","session_id":"other"}`, key...), 409, idemConflictErr())
	idemWantReplay(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "k", "Authorization", "Bearer synthetic-a"), id, "queued")
}

// idemScope sets the synthetic scope of x's namespace.
func idemScope(x *h, profile, identity string) {
	x.t.Helper()
	x.want(x.post("/__admin/hermes/scope", `{"profile":"`+profile+`","identity":"`+identity+`"}`), 200,
		`{"profile":"`+profile+`","identity":"`+identity+`","simulated":true}`)
}

// acceptance 42: reservations belong to a scope.
func TestC42ScopeIsolation(t *testing.T) {
	x := newH(t, emulator.Options{})
	key := []string{"Idempotency-Key", "delivery"}
	first := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, key...))
	idemScope(x, "other", "synthetic-listener")
	second := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, key...))
	if second == first {
		t.Fatalf("same id %s in another scope", second)
	}
	x.want(x.get("/v1/runs/"+first), 404, hermesErr("Run not found: "+first, "run_not_found"))
	idemScope(x, "default", "unauthenticated-test-listener")
	idemWantReplay(x, x.post("/v1/runs", idemSyntheticReq, key...), first, "queued")
	x.want(x.get("/v1/runs/"+second), 404, hermesErr("Run not found: "+second, "run_not_found"))
}

// acceptance 43 and 48: the key is Python-stripped (0x85 is whitespace in Latin-1).
func TestC43C48KeyStripped(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		for _, padded := range []string{" delivery ", "\x85delivery\x85", "\xa0\tdelivery \x85"} {
			t.Run(fmt.Sprintf("inproc=%v/%q", inproc, padded), func(t *testing.T) {
				x := newH(t, emulator.Options{})
				x.inproc = inproc
				id := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", padded))
				idemWantReplay(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "delivery"), id, "queued")
			})
		}
	}
}

// acceptance 44: a blank key means no idempotency.
func TestC44BlankKeys(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{})
		x.inproc = inproc
		a := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", " "))
		b := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", ""))
		c := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", " "))
		if a == b || b == c || a == c {
			t.Fatalf("inproc=%v: ids %s %s %s are not all different", inproc, a, b, c)
		}
	}
}

// acceptance 45 and 46: key validation.
func TestC45C46KeyValidation(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{})
		x.inproc = inproc
		keys := []string{"a b", strings.Repeat("x", 256), "\xe9", "caf\xc3\xa9"}
		if inproc {
			keys = append(keys, "a\x7f") // the HTTP layer refuses control bytes (wire.md §5)
		}
		for _, key := range keys {
			r := x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", key)
			if r.Status != 400 || string(r.Body) != hermesErr(idemInvalidKey, "invalid_idempotency_key") {
				t.Errorf("inproc=%v key %q: %d %s", inproc, key, r.Status, r.Body)
			}
		}
		// acceptance 46; no failure above consumed an id.
		long := strings.Repeat("x", 254) + "~"
		x.want(x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", long), 202, admStarted(run1))
		idemWantReplay(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", long), run1, "queued")
	}
}

// acceptance 47 and 52: an invalid body reserves nothing.
func TestC47C52InvalidBodyReservesNothing(t *testing.T) {
	for _, c := range []struct{ key, body, msg string }{
		{"fresh", `{}`, "Missing 'input' field"},
		{"k", `{"input":""}`, "Missing 'input' field"},
		{"j", `[]`, ""},
	} {
		x := newH(t, emulator.Options{})
		r := x.post("/v1/runs", c.body, "Idempotency-Key", c.key)
		if c.msg != "" {
			x.want(r, 400, hermesErr(c.msg, ""))
		} else {
			x.want(r, 501, unsupportedErr("non-object submission roots are outside the verified subset"))
		}
		x.want(x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", c.key), 202, admStarted(run1))
	}
}

// acceptance 49: JSON errors win over key errors.
func TestC49InvalidJSONBeforeKey(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/v1/runs", `{`, "Idempotency-Key", "invalid key"), 400, hermesErr("Invalid JSON", ""))
	x.want(x.post("/v1/runs", ``, "Idempotency-Key", "invalid key"), 400, hermesErr("Invalid JSON", ""))
	// Key validation comes before body validation.
	x.want(x.post("/v1/runs", `{}`, "Idempotency-Key", "invalid key"), 400, hermesErr(idemInvalidKey, "invalid_idempotency_key"))
}

// acceptance 51: repeated headers are joined with ", ".
func TestC51RepeatedKeyHeader(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{})
		x.inproc = inproc
		x.want(x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "a", "Idempotency-Key", "b"), 400,
			hermesErr(idemInvalidKey, "invalid_idempotency_key"))
		// Neither a nor b was reserved.
		x.want(x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "a"), 202, admStarted(run1))
	}
}

// idemCheckpoint commits a checkpoint of x's namespace and returns its id.
func idemCheckpoint(x *h) string {
	x.t.Helper()
	r := x.post("/__admin/checkpoints", "")
	x.want(r, 201, "")
	id := r.field(x.t, "id")
	if !strings.HasPrefix(id, "cp_") {
		x.t.Fatalf("checkpoint %s", r.Body)
	}
	return id
}

// acceptance 53: checkout restores reservations and scope; namespaces are separate.
func TestC53CheckoutRestoresReservation(t *testing.T) {
	x := newH(t, emulator.Options{})
	key := []string{"Idempotency-Key", "delivery"}
	first := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, key...))
	cp := idemCheckpoint(x)
	idemScope(x, "other", "synthetic")
	x.want(x.observe(first, `{"status":"running"}`), 404, hermesErr("Run not found: "+first, "run_not_found"))
	second := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, key...))
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+cp+`"}`), 200,
		`{"status":"ok","branch":"main","checkpoint":"`+cp+`"}`)
	idemWantReplay(x, x.post("/v1/runs", idemSyntheticReq, key...), first, "queued")
	x.want(x.get("/v1/runs/"+second), 404, hermesErr("Run not found: "+second, "run_not_found"))
	other := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "delivery", "X-Mockingbird-Namespace", "other"))
	if other == first || other != "run_5766426e4e75546c68545a486658646e" {
		t.Fatalf("namespace other id %s", other)
	}
}

// acceptance 54: a --db file keeps terminal reservations across a real restart.
func TestC54DurableReplayAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	key := []string{"Idempotency-Key", "delivery"}
	srv, err := emulator.New(emulator.Options{DBPath: path})
	if err != nil {
		t.Fatal(err)
	}
	x := &h{t: t, srv: srv}
	id := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, key...))
	x.want(x.observe(id, `{"status":"completed","output":"synthetic-output"}`), 200, "")
	journal1 := x.get("/__admin/requests?all=1")
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	srv2, err := emulator.New(emulator.Options{DBPath: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv2.Close() })
	y := &h{t: t, srv: srv2}
	idemWantReplay(y, y.post("/v1/runs", idemSyntheticReq, key...), id, "completed")
	y.want(y.get("/v1/runs/"+id), 200, "")
	if got := y.get("/v1/runs/"+id).field(t, "output"); got != "synthetic-output" {
		t.Fatalf("output after restart = %q", got)
	}
	y.want(y.post("/__admin/reset", ""), 200, `{"status":"ok","reset":["default"]}`)
	if fresh := idemWantNew(y, y.post("/v1/runs", idemSyntheticReq, key...)); fresh != run1 {
		t.Fatalf("after reset the id sequence restarts: got %s", fresh)
	}
	journal2 := y.get("/__admin/requests?all=1")
	for i, j := range []res{journal1, journal2} {
		y.want(j, 200, "")
		if !bytes.Contains(j.Body, []byte(`"operationId":"RunCreate"`)) {
			t.Fatalf("journal %d has no RunCreate entry: %s", i, j.Body)
		}
		for _, secret := range []string{"synthetic-output", `"input":"synthetic"`, "delivery"} {
			if bytes.Contains(j.Body, []byte(secret)) {
				t.Errorf("journal %d contains %q: %s", i, secret, j.Body)
			}
		}
	}
}

// idemVector is one entry of runs/testdata/fingerprint.json (the CPython
// vectors, read by the runs package's tests too).
type idemVector struct {
	Raw       string `json:"raw"`
	MemoryKey string `json:"memoryKey"`
	Canonical string `json:"canonical"`
	SHA256    string `json:"sha256"`
	Note      string `json:"note"`
}

// idemLatin1 turns a memory key of code points U+0000–U+00FF into the header
// bytes that carry it (wire.md §5); ok is false when it cannot be sent.
func idemLatin1(s string) (string, bool) {
	var b []byte
	for _, r := range s {
		if r > 0xFF || r == '\r' || r == '\n' || r == 0 {
			return "", false
		}
		b = append(b, byte(r))
	}
	return string(b), true
}

// idemStoredFingerprints reads key → fingerprint of the default namespace from
// a --db file. This reads the storage schema (storage/migrations) on purpose:
// the fingerprint is not observable on the wire except through replay/conflict.
func idemStoredFingerprints(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT idem_key, fingerprint FROM reservations WHERE namespace = 'default'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, fp string
		if err := rows.Scan(&k, &fp); err != nil {
			t.Fatal(err)
		}
		out[k] = fp
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// acceptance 55 (full stack) and 58: every CPython vector submitted with a key
// is stored with the vector's SHA-256, vectors of equal canonical text replay each
// other, and a vector of another canonical text conflicts.
func TestD55D58VectorsFullStack(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "runs", "testdata", "fingerprint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []idemVector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "f.db")
	x := newH(t, emulator.Options{DBPath: path})
	// Group the vectors by (canonical, memory key): one idempotency key per group.
	group := map[string]int{}
	first := map[int]string{} // group → run id
	keyOf := func(g int) string { return fmt.Sprintf("vec-%d", g) }
	sent := 0
	for i, v := range file.Vectors {
		mem, ok := idemLatin1(v.MemoryKey)
		if !ok {
			continue
		}
		g, seen := group[v.Canonical]
		if !seen {
			g = len(group)
			group[v.Canonical] = g
		}
		hdr := []string{"Idempotency-Key", keyOf(g)}
		if mem != "" {
			hdr = append(hdr, "X-Hermes-Session-Key", mem)
		}
		r := x.post("/v1/runs", v.Raw, hdr...)
		if !seen {
			if r.Status != 202 || string(r.Body) != admStarted(r.field(t, "run_id")) {
				t.Errorf("vector %d (%s) %q: %d %s, want a new run", i, v.Note, v.Raw, r.Status, r.Body)
				continue
			}
			first[g] = r.field(t, "run_id")
		} else if r.Status != 202 || string(r.Body) != idemReplay(first[g], "queued") {
			t.Errorf("vector %d (%s) %q: %d %s, want a replay of group %d", i, v.Note, v.Raw, r.Status, r.Body, g)
		}
		sent++
	}
	if sent < 80 || len(group) < 50 {
		t.Fatalf("only %d vectors in %d groups were sent", sent, len(group))
	}
	// A different canonical text under an existing key conflicts.
	x.want(x.post("/v1/runs", `{"input":"synthetic","n":2}`, "Idempotency-Key", keyOf(0), "X-Hermes-Session-Key", "memory"), 409, idemConflictErr())

	stored := idemStoredFingerprints(t, path)
	for _, v := range file.Vectors {
		if _, ok := idemLatin1(v.MemoryKey); !ok {
			continue
		}
		k := keyOf(group[v.Canonical])
		if stored[k] != v.SHA256 {
			t.Errorf("key %s (canonical %s): stored fingerprint %q, want %s", k, v.Canonical, stored[k], v.SHA256)
		}
	}

	// acceptance 58: {"input":"synthetic"} with memory key "" (absent or blank header).
	id58 := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "example58"))
	idemWantReplay(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "example58", "X-Hermes-Session-Key", " "), id58, "queued")
	if fp := idemStoredFingerprints(t, path)["example58"]; fp != "30a49be905b3604101f917e0ddc2a7d92b1d530b26868d28c62c72d9814723d6" {
		t.Fatalf("example58 fingerprint %s", fp)
	}
}

// acceptance 56: lone surrogates cannot be fingerprinted, but keyless runs accept them.
func TestD56LoneSurrogate(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/v1/runs", `{"input":"\ud800"}`, "Idempotency-Key", "k"), 501,
		unsupportedErr("lone Unicode surrogates cannot be fingerprinted by the pinned provider"))
	x.want(x.post("/v1/runs", `{"input":"ok","s":{"\udfff":1}}`, "Idempotency-Key", "k"), 501,
		unsupportedErr("lone Unicode surrogates cannot be fingerprinted by the pinned provider"))
	x.want(x.post("/v1/runs", `{"input":"\ud800"}`), 202, admStarted(run1))
	// The key was not reserved by the 501.
	x.want(x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "k"), 202, admStarted(idemRun2))
}

// acceptance 57: a lone surrogate is echoed as an escape.
func TestD57LoneSurrogateEchoed(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.post("/v1/runs", `{"input":"x","session_id":"\ud800"}`).field(t, "run_id")
	r := x.get("/v1/runs/" + id)
	x.want(r, 200, "")
	if !bytes.Contains(r.Body, []byte(`"session_id":"\ud800"`)) {
		t.Fatalf("body %s", r.Body)
	}
}
