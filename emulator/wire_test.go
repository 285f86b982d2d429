package emulator_test

// Acceptance section O (wire and process, items 189–207 without the binary
// items 196–197, which are in binary_test.go; 189 and 195 are also in
// core_test.go): wire.md §1–§8 and the seed oracle sequences.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// wireSecurity are the upstream security headers of provider responses (wire.md §8).
var wireSecurity = [][2]string{
	{"Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"},
	{"Permissions-Policy", "camera=(), microphone=(), geolocation=()"},
	{"Strict-Transport-Security", "max-age=31536000; includeSubDomains"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"X-Xss-Protection", "0"},
	{"Referrer-Policy", "no-referrer"},
}

// wireNever are headers the emulator never emits (wire.md §8).
var wireNever = []string{"Www-Authenticate", "Access-Control-Allow-Origin", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Headers", "Vary", "Set-Cookie"}

// wireWantSecurity checks that r carries exactly the security headers (present
// = true) or none of them.
func wireWantSecurity(t *testing.T, what string, r res, present bool) {
	t.Helper()
	for _, sh := range wireSecurity {
		got := r.Header.Values(sh[0])
		switch {
		case present && (len(got) != 1 || got[0] != sh[1]):
			t.Errorf("%s: %s = %q, want %q", what, sh[0], got, sh[1])
		case !present && len(got) != 0:
			t.Errorf("%s: unexpected %s = %q", what, sh[0], got)
		}
	}
	for _, name := range wireNever {
		if v, ok := r.Header[name]; ok {
			t.Errorf("%s: unexpected %s = %q", what, name, v)
		}
	}
}

// wireWantJSONType checks Content-Type is exactly application/json (wire.md §1).
func wireWantJSONType(t *testing.T, what string, r res) {
	t.Helper()
	if got := r.Header.Values("Content-Type"); len(got) != 1 || got[0] != "application/json" {
		t.Errorf("%s: Content-Type = %q, want exactly application/json", what, got)
	}
}

// acceptance 189 (routing strictness beyond core_test.go's list, wire.md §6):
// every unknown method/path is 404 page not found with the security headers.
func TestO189RoutingStrictness(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{})
		x.inproc = inproc
		id := x.start()
		for _, c := range [][2]string{
			{"POST", "/v1/runs/"}, {"GET", "/v1/runs"}, {"DELETE", "/v1/runs/x"}, {"GET", "/v1/runs/x/stop"},
			{"GET", "/missing"}, {"GET", "/p/default/v1/runs/x"}, {"GET", "/v1/runs/" + id + "/"},
			{"GET", "/V1/runs/" + id}, {"OPTIONS", "/v1/runs"}, {"PUT", "/v1/runs/" + id},
			{"POST", "/v1/runs/" + id}, {"GET", "/v1/runs//events"}, {"POST", "/health"}, {"GET", "/health/"},
			{"GET", "/v1/capabilities/"}, {"POST", "/v1/capabilities"},
		} {
			r := x.do(c[0], c[1], "")
			if r.Status != 404 || string(r.Body) != `{"message":"page not found"}` {
				t.Errorf("inproc=%v %s %s: %d %s", inproc, c[0], c[1], r.Status, r.Body)
				continue
			}
			wireWantJSONType(t, c[0]+" "+c[1], r)
			wireWantSecurity(t, c[0]+" "+c[1], r, true)
		}
		// HEAD of a non-GET operation is not routed either.
		r := x.do("HEAD", "/v1/runs/"+id+"/stop", "")
		if r.Status != 404 || len(r.Body) != 0 {
			t.Errorf("inproc=%v HEAD stop: %d %q", inproc, r.Status, r.Body)
		}
		// The query string never affects vendor routes.
		x.want(x.get("/v1/runs/"+id+"?namespace=other&x=1"), 200, "")
	}
}

// acceptance 190: BOM removed, invalid UTF-8 replaced, NaN rejected (wire.md §2.1).
func TestO190BodyDecoding(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	r := x.post("/v1/runs", "\xef\xbb\xbf"+`{"input":"synthetic"}`)
	x.want(r, 202, admStarted(run1))
	r = x.post("/v1/runs", "{\"input\":\"a\xffb\",\"session_id\":\"s\xffs\"}")
	x.want(r, 202, "")
	// The invalid byte became U+FFFD, echoed as raw UTF-8.
	p := x.get("/v1/runs/" + r.field(t, "run_id"))
	if !bytes.Contains(p.Body, []byte(`"session_id":"s`+"\uFFFD"+`s"`)) {
		t.Errorf("session_id not decoded with U+FFFD: %s", p.Body)
	}
	for _, body := range []string{`{"input":"x","n":NaN}`, `{"input":"x","n":Infinity}`, `{"input":"x","n":-Infinity}`,
		"\xef\xbb\xbf\xef\xbb\xbf{\"input\":\"x\"}", `{"input":"x",}`, `{"input":"x","n":01}`} {
		x.want(x.post("/v1/runs", body), 400, hermesErr("Invalid JSON", ""))
	}
}

// acceptance 191: raw response form of a successful start and of other vendor answers.
func TestO191ResponseForm(t *testing.T) {
	x := newH(t, emulator.Options{})
	r := x.post("/v1/runs", `{"input":"synthetic"}`)
	x.want(r, 202, admStarted(run1))
	var compact bytes.Buffer
	if err := json.Compact(&compact, r.Body); err != nil || !bytes.Equal(compact.Bytes(), r.Body) {
		t.Errorf("body is not compact: %s", r.Body)
	}
	for what, rr := range map[string]res{
		"RunCreate 202": r,
		"RunGet 200":    x.get("/v1/runs/" + run1),
		"RunGet 404":    x.get("/v1/runs/missing"),
		"RunCreate 400": x.post("/v1/runs", `{}`),
		"RunCreate 501": x.post("/v1/runs", `[]`),
		"RunStop 200":   x.post("/v1/runs/"+run1+"/stop", ""),
	} {
		wireWantJSONType(t, what, rr)
		wireWantSecurity(t, what, rr, true)
		if got := rr.Header.Get("X-Mockingbird"); got != "hermes@"+emulator.Version+"; ns=default" {
			t.Errorf("%s: X-Mockingbird = %q", what, got)
		}
	}
	// Control-plane responses carry no security headers (controls §1).
	for what, rr := range map[string]res{"health": x.get("/health"), "admin": x.get("/__admin/clock")} {
		wireWantJSONType(t, what, rr)
		wireWantSecurity(t, what, rr, false)
	}
}

// acceptance 192: the run id is the percent-decoded path segment.
func TestO192PercentEncodedID(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{})
		x.inproc = inproc
		x.freeze()
		id := x.start()
		enc := strings.Replace(id, "_", "%5F", 1)
		x.want(x.get("/v1/runs/"+enc), 200, admQueued(id, `"hermes-agent"`))
		x.want(x.get("/v1/runs/"+strings.Replace(id, "_", "%5f", 1)), 200, admQueued(id, `"hermes-agent"`))
		x.want(x.post("/v1/runs/"+enc+"/stop", ""), 200, `{"run_id":"`+id+`","status":"stopping"}`)
		// The 404 message names the decoded id.
		x.want(x.get("/v1/runs/a%2Fb"), 404, hermesErr("Run not found: a/b", "run_not_found"))
	}
}

// acceptance 193: HEAD on RunGet is the GET without a body.
func TestO193Head(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{})
		x.inproc = inproc
		id := x.start()
		r := x.do("HEAD", "/v1/runs/"+id, "")
		if r.Status != 200 || len(r.Body) != 0 {
			t.Errorf("inproc=%v HEAD run: %d %q", inproc, r.Status, r.Body)
		}
		wireWantJSONType(t, "HEAD run", r)
		r = x.do("HEAD", "/v1/runs/missing", "")
		if r.Status != 404 || len(r.Body) != 0 {
			t.Errorf("inproc=%v HEAD missing: %d %q", inproc, r.Status, r.Body)
		}
		r = x.do("HEAD", "/v1/capabilities", "")
		if r.Status != 200 || len(r.Body) != 0 {
			t.Errorf("inproc=%v HEAD capabilities: %d %q", inproc, r.Status, r.Body)
		}
	}
}

// acceptance 194: non-ASCII text is sent as raw UTF-8 (wire.md §4.1).
func TestO194RawUTF8(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	x.want(x.observe(id, `{"status":"completed","output":"caf\u00e9 / <>& \u2028 \ud83d\ude00 \u007f"}`), 200, "")
	r := x.get("/v1/runs/" + id)
	x.want(r, 200, "")
	if !bytes.Contains(r.Body, []byte("caf\xc3\xa9")) || bytes.Contains(r.Body, []byte(`\u00e9`)) {
		t.Fatalf("é is not raw UTF-8 C3 A9: %q", r.Body)
	}
	if !bytes.Contains(r.Body, []byte(`"output":"café / <>& `+"\u2028 \U0001F600 \x7f"+`"`)) {
		t.Fatalf("output not raw: %q", r.Body)
	}
}

// wireRaw is a raw HTTP/1.1 client connection (acceptance 198).
type wireRaw struct {
	conn net.Conn
	br   *bufio.Reader
}

func wireDial(t *testing.T, url string) *wireRaw {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &wireRaw{conn: c, br: bufio.NewReader(c)}
}

// roundTrip writes one keep-alive request and reads its response.
func (w *wireRaw) roundTrip(method, path, body string, hdr ...string) (*http.Response, []byte, error) {
	var b strings.Builder
	b.WriteString(method + " " + path + " HTTP/1.1\r\nHost: emulator\r\nConnection: keep-alive\r\n")
	for i := 0; i+1 < len(hdr); i += 2 {
		b.WriteString(hdr[i] + ": " + hdr[i+1] + "\r\n")
	}
	if method == "POST" {
		b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	b.WriteString("\r\n" + body)
	_ = w.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(w.conn, b.String()); err != nil {
		return nil, nil, err
	}
	resp, err := http.ReadResponse(w.br, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	return resp, rb, err
}

// acceptance 198–200: an accepted admission whose response is dropped, seen by
// a raw keep-alive client, then recovered by replay, stopped, and pruned.
func TestO198to200AcceptedDrop(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.want(x.post("/__admin/faults/presets/hermes_submit_accepted_drop", ""), 201, "")
	const body = `{"input":"synthetic consumer input"}`
	c := wireDial(t, x.srv.URL())
	// The connection is a working keep-alive connection before the drop.
	resp, rb, err := c.roundTrip("GET", "/v1/runs/missing", "")
	if err != nil || resp.StatusCode != 404 || string(rb) != hermesErr("Run not found: missing", "run_not_found") {
		t.Fatalf("first request on the connection: %v %v %s", resp, err, rb)
	}
	resp, rb, err = c.roundTrip("POST", "/v1/runs", body, "Idempotency-Key", "delivery")
	if err == nil {
		t.Fatalf("dropped admission answered %d %s", resp.StatusCode, rb)
	}
	var ne net.Error
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") && !(errors.As(err, &ne) && !ne.Timeout()) {
		t.Fatalf("want a closed/reset connection, got %v", err)
	}
	// The same request on a new connection replays the stored run.
	resp, rb, err = wireDial(t, x.srv.URL()).roundTrip("POST", "/v1/runs", body, "Idempotency-Key", "delivery")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal(rb, &v)
	if resp.StatusCode != 202 || resp.Header.Get("Idempotency-Replayed") != "true" ||
		!regexp.MustCompile(`^run_[a-f0-9]{32}$`).MatchString(v.RunID) || string(rb) != idemReplay(v.RunID, "queued") {
		t.Fatalf("retry: %d %v %s", resp.StatusCode, resp.Header, rb)
	}
	id := v.RunID

	// acceptance 199
	x.want(x.get("/v1/runs/"+id), 200, admQueued(id, `"hermes-agent"`))
	x.want(x.post("/v1/runs/"+id+"/stop", `{}`), 200, `{"run_id":"`+id+`","status":"stopping"}`)
	x.want(x.observe(id, `{"status":"cancelled"}`), 200, "")
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"cancelled","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"run.cancelled"}`)
	x.want(x.post("/v1/runs", body, "Idempotency-Key", "delivery"), 202, idemReplay(id, "cancelled"))

	// acceptance 200
	x.advance("86400001")
	x.want(x.post("/v1/runs", body, "Idempotency-Key", "prune-trigger"), 202, "")
	x.want(x.post("/__admin/hermes/sweep", `{}`), 200, "")
	x.want(x.get("/v1/runs/"+id), 404, hermesErr("Run not found: "+id, "run_not_found"))
	r := x.post("/v1/runs", body, "Idempotency-Key", "delivery")
	if fresh := idemWantNew(x, r); fresh == id {
		t.Fatalf("resubmission reused %s", id)
	}
}

// acceptance 201: the oracle sequence for a cancelled keyed run.
func TestO201OracleCancelled(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	key := []string{"Idempotency-Key", "cancelled"}
	id := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, key...))
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	x.want(x.post("/v1/runs", idemSyntheticReq, key...), 202, idemReplay(id, "running"))
	x.want(x.post("/v1/runs/"+id+"/stop", ""), 200, `{"run_id":"`+id+`","status":"stopping"}`)
	x.want(x.observe(id, `{"status":"cancelled"}`), 200, "")
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"cancelled","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"run.cancelled"}`)
}

// acceptance 202: the oracle sequence for a stale restart.
func TestO202OracleStaleRestart(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.clock(`{"set":1700003600001,"freeze":true}`)
	keyed := idemWantNew(x, x.post("/v1/runs", idemSyntheticReq, "Idempotency-Key", "unfinished"))
	keyless := x.start()
	x.want(x.observe(keyed, `{"status":"running"}`), 200, "")
	x.want(x.observe(keyless, `{"status":"running"}`), 200, "")
	x.want(x.restart("stale"), 200, `{"owner":"stale","retained":1,"discarded":1,"simulated":true}`)
	x.want(x.get("/v1/runs/"+keyed), 200, `{"created_at":1700003600.001,"model":"hermes-agent","object":"hermes.run","run_id":"`+keyed+`","session_id":"`+keyed+`","status":"interrupted","updated_at":1700003600.001,"error":"The gateway restarted before this run settled.","last_event":"run.interrupted"}`)
	x.want(x.get("/v1/runs/"+keyless), 404, hermesErr("Run not found: "+keyless, "run_not_found"))
}

// acceptance 203: events, approval and steer work (D2) and answer 404 for unknown runs.
func TestO203UnknownRunOperations(t *testing.T) {
	x := newH(t, emulator.Options{})
	notFound := hermesErr("Run not found: example", "run_not_found")
	begin := time.Now()
	x.want(x.get("/v1/runs/example/events"), 404, notFound)
	if d := time.Since(begin); d > 900*time.Millisecond {
		t.Errorf("events of an unknown run waited %v", d)
	}
	x.want(x.post("/v1/runs/example/approval", `{"choice":"once"}`), 404, notFound)
	x.want(x.post("/v1/runs/example/steer", `{"input":"x"}`), 404, notFound)
	x.want(x.post("/v1/runs/example/stop", ""), 404, notFound)
	x.want(x.get("/missing"), 404, `{"message":"page not found"}`)
}

// acceptance 204: ?namespace= on admin routes is validated.
func TestO204AdminNamespaceQuery(t *testing.T) {
	x := newH(t, emulator.Options{})
	r := x.post("/__admin/hermes/sweep?namespace=bad%20name", `{}`)
	x.want(r, 400, adminErr("x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/"))
	if got := r.Header.Get("X-Mockingbird"); got != "hermes@"+emulator.Version+"; ns=default" {
		t.Errorf("X-Mockingbird = %q", got)
	}
	x.want(x.post("/__admin/hermes/sweep?namespace=good", `{}`), 200, `{"cacheRemoved":0,"simulated":true}`)
}

// acceptance 205: admin routing ignores empty segments.
func TestO205AdminTrailingSlash(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	for _, path := range []string{"/__admin/clock", "/__admin/clock/", "/__admin//clock"} {
		r := x.get(path)
		x.want(r, 200, "")
		// offsetMs of a frozen clock follows the wall clock (the offset an
		// unfreeze would keep), so only the keys and the instant are compared.
		var clock struct {
			Now      json.Number  `json:"now"`
			Frozen   bool         `json:"frozen"`
			OffsetMs *json.Number `json:"offsetMs"`
		}
		if err := json.Unmarshal(r.Body, &clock); err != nil || clock.Now != "1700000000000" || !clock.Frozen || clock.OffsetMs == nil {
			t.Errorf("GET %s: clock state %s", path, r.Body)
		}
		if got := jsonKeys(t, r.Body); strings.Join(got, ",") != "now,frozen,offsetMs" {
			t.Errorf("GET %s: keys %v", path, got)
		}
	}
}

// wireTimeline is GET /__admin/timeline.
type wireTimeline struct {
	Branches    map[string]string `json:"branches"`
	Checkpoints []struct {
		ID     string  `json:"id"`
		Branch string  `json:"branch"`
		Parent *string `json:"parent"`
	} `json:"checkpoints"`
}

func wireReadTimeline(x *h) wireTimeline {
	x.t.Helper()
	r := x.get("/__admin/timeline")
	x.want(r, 200, "")
	var tl wireTimeline
	if err := json.Unmarshal(r.Body, &tl); err != nil {
		x.t.Fatalf("timeline %s: %v", r.Body, err)
	}
	return tl
}

// acceptance 206: an observe commits a checkpoint on main without announcing it.
func TestO206ObserveCheckpoint(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	before := wireReadTimeline(x)
	r := x.observe(id, `{"status":"running"}`)
	x.want(r, 200, "")
	if v, ok := r.Header["X-Mockingbird-Checkpoint"]; ok {
		t.Fatalf("observe carries X-Mockingbird-Checkpoint %q", v)
	}
	after := wireReadTimeline(x)
	head := after.Branches["main"]
	if head == "" || head == before.Branches["main"] || len(after.Checkpoints) != len(before.Checkpoints)+1 {
		t.Fatalf("no new main head: before %+v after %+v", before, after)
	}
	last := after.Checkpoints[len(after.Checkpoints)-1]
	if last.ID != head || last.Branch != "main" || last.Parent == nil || *last.Parent != before.Branches["main"] {
		t.Fatalf("new checkpoint %+v, head %s, previous head %s", last, head, before.Branches["main"])
	}
}

// acceptance 207: credentials are listed masked and never route a request.
func TestO207Credentials(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.do("PUT", "/__admin/credentials", `{"credentials":{"sk-test-123456":"a"}}`), 200, `{"mapped":1}`)
	x.want(x.get("/__admin/credentials"), 200, `{"credentials":[{"credential":"sk-tes…56","namespace":"a"}]}`)
	r := x.post("/v1/runs", idemSyntheticReq, "Authorization", "Bearer sk-test-123456")
	x.want(r, 202, admStarted(run1))
	if got := r.Header.Get("X-Mockingbird"); got != "hermes@"+emulator.Version+"; ns=default" {
		t.Fatalf("X-Mockingbird = %q", got)
	}
	x.want(x.get("/v1/runs/"+run1), 200, "")
	x.want(x.get("/ns/a/v1/runs/"+run1), 404, hermesErr("Run not found: "+run1, "run_not_found"))
}
