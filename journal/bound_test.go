package journal

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unsafe"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The journal holds at most FullNamespaces × size entries in all (hardening
// H3): past it, the rings of the namespaces journaled least recently are
// dropped whole, and the busy namespaces keep theirs.
func TestLimitDropsLeastRecentNamespaces(t *testing.T) {
	j := New(2) // limit 200
	if j.Limit() != 2*FullNamespaces {
		t.Fatalf("Limit %d, want %d", j.Limit(), 2*FullNamespaces)
	}
	j.Add(entry("busy", "RunGet", 200, base))
	j.Add(entry("busy", "RunGet", 200, base+1))
	for i := range 1000 {
		j.Add(entry(fmt.Sprint("fresh", i), "", 404, base+2))
		if i%10 == 0 {
			j.Add(entry("busy", "RunGet", 200, base+3)) // journaled again: stays
		}
		if err := j.check(); err != nil {
			t.Fatalf("after %d fresh namespaces: %v", i+1, err)
		}
	}
	body, _ := j.Query("busy", nil)
	if got := summary(t, body); got != "busy:RunGet:200:3 busy:RunGet:200:3" {
		t.Fatalf("busy: %s", got)
	}
	body, _ = j.Query("fresh0", nil)
	if got := summary(t, body); got != "" {
		t.Fatalf("fresh0 was journaled least recently, still holds %s", got)
	}
	body, _ = j.Query("fresh999", nil)
	if got := summary(t, body); got != "fresh999::404:2" {
		t.Fatalf("fresh999: %s", got)
	}
	if n := j.Count("", true, Filter{}); n != j.Limit() {
		t.Fatalf("entries in all %d, want the limit %d", n, j.Limit())
	}
	if n := j.Count("", true, Filter{OperationID: "RunGet"}); n != 2 {
		t.Fatalf("busy entries %d, want 2", n)
	}
}

// A full ring that overwrites its oldest entry does not count twice, and
// Clear gives the room back.
func TestLimitCountsAndClear(t *testing.T) {
	j := New(3) // limit 300
	for i := range 10 {
		for ns := range 100 {
			j.Add(entry(fmt.Sprint("n", ns), "RunGet", 200, base+float64(i)))
		}
	}
	if err := j.check(); err != nil {
		t.Fatal(err)
	}
	if n := j.Count("", true, Filter{}); n != 300 {
		t.Fatalf("entries %d, want 300 (100 full rings: nothing dropped)", n)
	}
	j.Clear("n5", false)
	j.Add(entry("other", "RunGet", 200, base))
	if err := j.check(); err != nil {
		t.Fatal(err)
	}
	if n := j.Count("n6", false, Filter{}); n != 3 {
		t.Fatalf("n6 holds %d after a clear made room, want 3", n)
	}
	j.Clear("", true)
	if err := j.check(); err != nil {
		t.Fatal(err)
	}
	j.Add(entry("a", "RunGet", 200, base))
	if err := j.check(); err != nil || j.Count("", true, Filter{}) != 1 {
		t.Fatalf("after clear all: %v, %d entries", err, j.Count("", true, Filter{}))
	}
	if big := New(1 << 62); big.Limit() <= 0 {
		t.Fatalf("Limit overflows: %d", big.Limit())
	}
}

// An entry keeps at most the first runs.EchoLimit bytes of the namespace,
// method and path a client sent (hardening H9): a 1 MB path costs 1 KB.
func TestEntryCutsLongFields(t *testing.T) {
	long := "/" + strings.Repeat("p", 1<<20)
	j := New(5)
	j.Add(Entry{Namespace: strings.Repeat("n", 5000), Method: strings.Repeat("M", 5000), Path: long, Status: 400, At: base})
	j.Add(Entry{Namespace: "ok", Method: "GET", Path: "/x/" + strings.Repeat("é", 600), Status: 404, At: base})
	body, _ := j.Query("", url.Values{"all": {"1"}})
	v, err := runs.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := v.Obj.Get("requests")
	if len(reqs.Arr) != 2 {
		t.Fatalf("body %.300s", body)
	}
	for i, want := range []struct{ ns, method, path string }{
		{strings.Repeat("n", runs.EchoLimit), strings.Repeat("M", runs.EchoLimit), long[:runs.EchoLimit]},
		// 3 + 510×2 = 1023 bytes: the cut keeps whole characters.
		{"ok", "GET", "/x/" + strings.Repeat("é", 510)},
	} {
		ns, _ := reqs.Arr[i].Obj.Get("namespace")
		m, _ := reqs.Arr[i].Obj.Get("method")
		p, _ := reqs.Arr[i].Obj.Get("path")
		if ns.Str != want.ns || m.Str != want.method || p.Str != want.path {
			t.Errorf("entry %d: namespace %d bytes, method %d, path %d (%q…), want %d, %d, %d",
				i, len(ns.Str), len(m.Str), len(p.Str), p.Str[:min(len(p.Str), 8)], len(want.ns), len(want.method), len(want.path))
		}
	}
	if n := j.Count("", true, Filter{PathPrefix: long[:runs.EchoLimit]}); n != 1 {
		t.Fatalf("count by the cut path: %d", n)
	}
}

// The scenario step counters list at most MaxScenarioCounts names; a listed
// name is still counted, a new one past the bound is not, until a reset.
func TestMetricsScenarioBound(t *testing.T) {
	var m Metrics
	for i := range 2 * MaxScenarioCounts {
		m.ScenarioStep(fmt.Sprint("s-", i))
	}
	m.ScenarioStep("s-0")
	s := m.Snapshot()
	if len(s.ScenarioSteps) != MaxScenarioCounts {
		t.Fatalf("%d names listed, want %d", len(s.ScenarioSteps), MaxScenarioCounts)
	}
	for _, c := range s.ScenarioSteps {
		if c.Scenario == "s-0" && c.Count != 2 || c.Scenario == fmt.Sprint("s-", MaxScenarioCounts) {
			t.Fatalf("counter %s = %d", c.Scenario, c.Count)
		}
	}
	m.Reset()
	m.ScenarioStep("new")
	if s := m.Snapshot(); len(s.ScenarioSteps) != 1 {
		t.Fatalf("after reset: %d names", len(s.ScenarioSteps))
	}
}

// The metrics' unmatched counters list at most MaxUnmatched method and path
// pairs, each cut to runs.EchoLimit bytes; requests past it are still counted.
func TestMetricsUnmatchedBound(t *testing.T) {
	var m Metrics
	long := "/" + strings.Repeat("u", 1<<20)
	m.Record(Entry{Method: "GET", Path: long, Status: 404})
	m.Record(Entry{Method: "GET", Path: long, Status: 404})
	for i := range 2 * MaxUnmatched {
		m.Record(Entry{Method: "GET", Path: fmt.Sprint("/fresh/", i), Status: 404})
	}
	m.Record(Entry{Method: "GET", Path: "/fresh/0", Status: 404}) // listed: counted again
	s := m.Snapshot()
	if len(s.Unmatched) != MaxUnmatched || s.Requests != 2*MaxUnmatched+3 {
		t.Fatalf("unmatched pairs %d, requests %d; want %d, %d", len(s.Unmatched), s.Requests, MaxUnmatched, 2*MaxUnmatched+3)
	}
	top := s.Unmatched[0:2]
	if top[0].Count != 2 || top[0].Path != "/fresh/0" || top[1].Count != 2 || top[1].Path != long[:runs.EchoLimit] {
		t.Fatalf("top counters %d %q, %d %.20q (%d bytes)", top[0].Count, top[0].Path, top[1].Count, top[1].Path, len(top[1].Path))
	}
	for _, u := range s.Unmatched {
		if u.Path == fmt.Sprint("/fresh/", MaxUnmatched) {
			t.Fatalf("pair %d listed past MaxUnmatched", MaxUnmatched+1)
		}
	}
	m.Reset()
	m.Record(Entry{Method: "GET", Path: "/new", Status: 404})
	if s := m.Snapshot(); len(s.Unmatched) != 1 {
		t.Fatalf("after reset: %d pairs", len(s.Unmatched))
	}
}

// An entry shares no memory with the strings the caller passed: a namespace
// or path cut from a request line would keep the whole line (query string
// included) alive for as long as the entry.
func TestEntryKeepsCopies(t *testing.T) {
	line := "GET /ns/abc/v1/runs/run_x?" + strings.Repeat("q", 1<<16) + " HTTP/1.1"
	ns, method, path := line[8:11], line[0:3], line[11:25]
	inLine := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		lo := uintptr(unsafe.Pointer(unsafe.StringData(line)))
		return p >= lo && p < lo+uintptr(len(line))
	}
	j := New(5)
	var m Metrics
	for _, op := range []string{"RunGet", ""} {
		e := Entry{Namespace: ns, OperationID: op, Method: method, Path: path, Status: 404, At: base}
		j.Add(e)
		m.Record(e)
	}
	for k, r := range j.spaces {
		for _, rec := range r.buf {
			if inLine(k) || inLine(r.ns) || inLine(rec.e.Namespace) || inLine(rec.e.Method) || inLine(rec.e.Path) {
				t.Fatalf("journal entry %+v points into the request line", rec.e)
			}
		}
	}
	for k := range m.unmatched {
		if inLine(k.method) || inLine(k.path) {
			t.Fatalf("metrics key %+v points into the request line", k)
		}
	}
	if len(m.unmatched) != 1 || j.Count("abc", false, Filter{PathPrefix: "/v1/runs/run_x"}) != 2 {
		t.Fatalf("unmatched %v, count %d", m.unmatched, j.Count("abc", false, Filter{}))
	}
}

// A namespace longer than runs.EchoLimit bytes is journaled under its first
// runs.EchoLimit bytes; listing, counting and clearing by the name the client
// sent (the admin namespace of the same header) find those entries.
func TestLongNamespaceIsFoundByItsFullName(t *testing.T) {
	long := strings.Repeat("n", 1500)
	j := New(5)
	j.Add(Entry{Namespace: long, Method: "GET", Path: "/v1/capabilities", Status: 400, At: base})
	body, err := j.Query(long, url.Values{})
	if err != nil || !strings.Contains(string(body), `"path":"/v1/capabilities"`) {
		t.Fatalf("Query by the full name: %v %.200s", err, body)
	}
	if n := j.Count(long, false, Filter{}); n != 1 {
		t.Fatalf("Count by the full name: %d, want 1", n)
	}
	j.Clear(long, false)
	if n := j.Count("", true, Filter{}); n != 0 {
		t.Fatalf("after Clear by the full name: %d entries left", n)
	}
	if err := j.check(); err != nil {
		t.Fatal(err)
	}
}

// The content type of a failed request's `request` is cut to its first
// runs.EchoLimit bytes like the namespace, method and path, and kept as a
// copy: a client may send a Content-Type of up to the header limit (1 MB) on
// every 404, and the journal keeps 100 × --journal-size entries.
func TestEntryCutsLongContentType(t *testing.T) {
	ct := "x/" + strings.Repeat("a", 1<<20)
	te := "chunked"
	j := New(5)
	j.Add(Entry{Namespace: "a", Method: "GET", Path: "/v1/nothing", Status: 404, At: base,
		Request: &RequestMeta{ContentType: &ct, TransferEncoding: &te}})
	r := j.spaces["a"]
	got := r.buf[0].e.Request
	if got == nil || got.ContentType == nil || *got.ContentType != ct[:runs.EchoLimit] {
		t.Fatalf("contentType kept %d bytes, want %d", len(*got.ContentType), runs.EchoLimit)
	}
	if p, lo := uintptr(unsafe.Pointer(unsafe.StringData(*got.ContentType))), uintptr(unsafe.Pointer(unsafe.StringData(ct))); p >= lo && p < lo+uintptr(len(ct)) {
		t.Fatal("contentType points into the request's header")
	}
	if *got.TransferEncoding != "chunked" || got.BodyBytes != nil {
		t.Fatalf("request %+v", got)
	}
}
