package journal

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

const base = 1700000000000.0 // 2023-11-14T22:13:20.000Z

func strp(s string) *string { return &s }
func i64p(n int64) *int64   { return &n }

func TestEntryJSON(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
		want string
	}{
		{"unmatched: no operationId key", Entry{Namespace: "default", Method: "GET", Path: "/missing", Status: 404, DurationMs: 0.5, At: base},
			`{"service":"hermes","namespace":"default","method":"GET","path":"/missing","status":404,"durationMs":0.5,"unmatched":true,"at":"2023-11-14T22:13:20.000Z"}`},
		{"every key in order", Entry{Namespace: "a", OperationID: "RunCreate", Method: "POST", Path: "/v1/runs", Status: 0, DurationMs: 12,
			FaultID: "hermes_submit_accepted_drop", RunID: "run_1", Accepted: true, Checkpoint: "cp_00000002", At: base + 1.9},
			`{"service":"hermes","namespace":"a","operationId":"RunCreate","method":"POST","path":"/v1/runs","status":0,"durationMs":12,"unmatched":false,` +
				`"faultId":"hermes_submit_accepted_drop","ids":{"runId":"run_1"},"accepted":true,"checkpoint":"cp_00000002","at":"2023-11-14T22:13:20.001Z"}`},
		// acceptance 172
		{"request meta", Entry{Namespace: "default", OperationID: "RunCreate", Method: "POST", Path: "/v1/runs", Status: 400, DurationMs: 0.42,
			Request: &RequestMeta{ContentType: strp("text/plain"), BodyBytes: i64p(1)}, At: base},
			`{"service":"hermes","namespace":"default","operationId":"RunCreate","method":"POST","path":"/v1/runs","status":400,"durationMs":0.42,"unmatched":false,` +
				`"request":{"contentType":"text/plain","bodyBytes":1,"transferEncoding":null},"at":"2023-11-14T22:13:20.000Z"}`},
		{"issues with request; latin-1 header", Entry{Namespace: "default", OperationID: "RunCreate", Method: "POST", Path: "/v1/runs", Status: 400,
			Request: &RequestMeta{ContentType: strp("text/\xe9\"x"), TransferEncoding: strp("chunked")},
			Issues:  []Issue{{"body", "/input"}, {"header", "Idempotency-Key"}}, At: base},
			`{"service":"hermes","namespace":"default","operationId":"RunCreate","method":"POST","path":"/v1/runs","status":400,"durationMs":0,"unmatched":false,` +
				`"request":{"contentType":"text/é\"x","bodyBytes":null,"transferEncoding":"chunked"},"issues":[{"in":"body","pointer":"/input"},{"in":"header","pointer":"Idempotency-Key"}],"at":"2023-11-14T22:13:20.000Z"}`},
		{"issues without request are not rendered", Entry{Namespace: "n", Method: "GET", Path: "/", Status: 404, Issues: []Issue{{"query", "x"}}, At: base},
			`{"service":"hermes","namespace":"n","method":"GET","path":"/","status":404,"durationMs":0,"unmatched":true,"at":"2023-11-14T22:13:20.000Z"}`},
		{"empty issues are not rendered", Entry{Namespace: "n", Method: "GET", Path: "/", Status: 404, Request: &RequestMeta{}, Issues: []Issue{}, At: base},
			`{"service":"hermes","namespace":"n","method":"GET","path":"/","status":404,"durationMs":0,"unmatched":true,"request":{"contentType":null,"bodyBytes":null,"transferEncoding":null},"at":"2023-11-14T22:13:20.000Z"}`},
		{"strings escaped", Entry{Namespace: "bad ns\"", Method: "GET", Path: "/a\nb", Status: 404, At: base},
			`{"service":"hermes","namespace":"bad ns\"","method":"GET","path":"/a\nb","status":404,"durationMs":0,"unmatched":true,"at":"2023-11-14T22:13:20.000Z"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.e.AppendJSON(nil)); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRoundMs(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0.4249, "0.42"}, {0.425, "0.43"}, {0.415, "0.42"}, {1.005, "1"}, {12.3456, "12.35"}, {1000, "1000"}, {0, "0"}, {0.004, "0"}, {0.005, "0.01"},
	}
	for _, tc := range tests {
		if got := runs.FormatJSNumber(roundMs(tc.in)); got != tc.want {
			t.Errorf("roundMs(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// entry builds a GET entry of operation op ("" = unmatched) at clock ms at.
func entry(ns, op string, status int, at float64) Entry {
	path := "/v1/runs"
	if op == "" {
		path = "/missing"
	}
	return Entry{Namespace: ns, OperationID: op, Method: "GET", Path: path, Status: status, At: at}
}

// summary renders a query result as "ns:op:status:atOffset" items.
func summary(t *testing.T, body []byte) string {
	t.Helper()
	v, err := runs.Parse(body)
	if err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	reqs, _ := v.Obj.Get("requests")
	var parts []string
	for _, r := range reqs.Arr {
		ns, _ := r.Obj.Get("namespace")
		op, _ := r.Obj.Get("operationId")
		st, _ := r.Obj.Get("status")
		at, _ := r.Obj.Get("at")
		ms, _ := runs.ParseISO8601(at.Str)
		parts = append(parts, fmt.Sprintf("%s:%s:%s:%d", ns.Str, op.Str, st.Int, int64(ms-base)))
	}
	return strings.Join(parts, " ")
}

func TestQuery(t *testing.T) {
	j := New(10)
	j.Add(entry("a", "RunCreate", 202, base))
	j.Add(entry("b", "RunCreate", 202, base+1))
	j.Add(entry("a", "RunGet", 200, base+2))
	j.Add(entry("a", "", 404, base+3))
	j.Add(entry("b", "RunGet", 404, base+4))
	j.Add(entry("a", "RunGet", 404, base+5))
	tests := []struct {
		name, ns, query string
		want            string
	}{
		{"namespace a", "a", "", "a:RunCreate:202:0 a:RunGet:200:2 a::404:3 a:RunGet:404:5"},
		{"unknown namespace", "zzz", "", ""},
		{"all=1 in arrival order", "zzz", "all=1", "a:RunCreate:202:0 b:RunCreate:202:1 a:RunGet:200:2 a::404:3 b:RunGet:404:4 a:RunGet:404:5"},
		{"all=true is not all", "b", "all=true", "b:RunCreate:202:1 b:RunGet:404:4"},
		// acceptance 173: limit=1 returns only the newest entry
		{"limit 1", "a", "limit=1", "a:RunGet:404:5"},
		{"limit 0 is no limit", "a", "limit=0", "a:RunCreate:202:0 a:RunGet:200:2 a::404:3 a:RunGet:404:5"},
		{"limit beyond int", "a", "limit=99999999999999999999999", "a:RunCreate:202:0 a:RunGet:200:2 a::404:3 a:RunGet:404:5"},
		{"status", "a", "status=404", "a::404:3 a:RunGet:404:5"},
		{"operationId", "a", "operationId=RunGet", "a:RunGet:200:2 a:RunGet:404:5"},
		{"since epoch ms", "a", "since=1700000000002", "a:RunGet:200:2 a::404:3 a:RunGet:404:5"},
		{"since ISO", "a", "since=2023-11-14T22:13:20.003Z", "a::404:3 a:RunGet:404:5"},
		{"limit after filters", "zzz", "all=1&status=404&limit=2", "b:RunGet:404:4 a:RunGet:404:5"},
		{"filters combine", "a", "operationId=RunGet&status=200&since=1700000000000", "a:RunGet:200:2"},
		{"empty values count as absent", "a", "since=&status=&limit=&operationId=", "a:RunCreate:202:0 a:RunGet:200:2 a::404:3 a:RunGet:404:5"},
		{"first value wins", "a", "status=404&status=abc", "a::404:3 a:RunGet:404:5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			body, qerr := j.Query(tc.ns, q)
			if qerr != nil {
				t.Fatalf("error %d %s", qerr.Status, qerr.Message)
			}
			if !strings.HasPrefix(string(body), `{"size":10,"requests":[`) {
				t.Fatalf("body %s", body)
			}
			if got := summary(t, body); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// acceptance 173
func TestQueryErrors(t *testing.T) {
	const (
		since  = "since: expected epoch ms or ISO-8601"
		status = "status: expected an HTTP status"
		limit  = "limit: expected a count"
	)
	tests := []struct{ query, msg string }{
		{"status=abc", status},
		{"limit=x", limit},
		{"since=yesterday", since},
		{"status=20", status},
		{"status=2000", status},
		{"status=-20", status},
		{"limit=-1", limit},
		{"limit=1.5", limit},
		{"since=1700000000000.5", since},
		{"since=2023-13-01", since},
		{"limit=x&status=abc&since=yesterday", since}, // since first
		{"limit=x&status=abc", status},                // then status
	}
	j := New(10)
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			_, err := j.Query("default", q)
			if err == nil || err.Status != 400 || err.Message != tc.msg || err.Envelope != runs.EnvAdmin {
				t.Fatalf("got %+v, want 400 %q", err, tc.msg)
			}
		})
	}
}

func TestRingCapacity(t *testing.T) {
	j := New(3)
	for i := range 5 {
		j.Add(entry("a", "RunGet", 200, base+float64(i)))
	}
	j.Add(entry("b", "RunGet", 200, base+10))
	body, _ := j.Query("a", nil)
	if got, want := summary(t, body), "a:RunGet:200:2 a:RunGet:200:3 a:RunGet:200:4"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	body, _ = j.Query("x", url.Values{"all": {"1"}})
	if got, want := summary(t, body), "a:RunGet:200:2 a:RunGet:200:3 a:RunGet:200:4 b:RunGet:200:10"; got != want {
		t.Fatalf("all: got %s, want %s", got, want)
	}

	z := New(0)
	z.Add(entry("a", "RunGet", 200, base))
	body, _ = z.Query("a", url.Values{"all": {"1"}})
	if got := string(body); got != `{"size":0,"requests":[]}` {
		t.Fatalf("size 0: %s", got)
	}
	if z.Size() != 0 || j.Size() != 3 {
		t.Fatalf("Size %d %d", z.Size(), j.Size())
	}
}

func TestAddRoundsDuration(t *testing.T) {
	j := New(1)
	e := entry("a", "RunGet", 200, base)
	e.DurationMs = 3.14159
	j.Add(e)
	body, _ := j.Query("a", nil)
	if !strings.Contains(string(body), `"durationMs":3.14,`) {
		t.Fatalf("body %s", body)
	}
}

func TestClear(t *testing.T) {
	j := New(5)
	j.Add(entry("a", "RunGet", 200, base))
	j.Add(entry("b", "RunGet", 200, base+1))
	j.Clear("a", false)
	body, _ := j.Query("x", url.Values{"all": {"1"}})
	if got := summary(t, body); got != "b:RunGet:200:1" {
		t.Fatalf("after clear a: %s", got)
	}
	j.Add(entry("a", "RunGet", 200, base+2))
	j.Clear("zzz", true)
	body, _ = j.Query("x", url.Values{"all": {"1"}})
	if got := string(body); got != `{"size":5,"requests":[]}` {
		t.Fatalf("after clear all: %s", got)
	}
}

func BenchmarkJournalAdd(b *testing.B) {
	j := New(1000)
	e := Entry{Namespace: "default", OperationID: "RunGet", Method: "GET", Path: "/v1/runs/run_x", Status: 200, DurationMs: 0.4242, At: base}
	b.ReportAllocs()
	for b.Loop() {
		j.Add(e)
	}
}

// Add, Query, Clear and the metrics may run concurrently (run with -race).
func TestConcurrentUse(t *testing.T) {
	j := New(5)
	var m Metrics
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				e := entry(fmt.Sprint("ns", g), "RunGet", 200, base)
				switch i % 4 {
				case 0, 1:
					j.Add(e)
					m.Record(e)
				case 2:
					j.Query("ns0", url.Values{"all": {"1"}})
					m.Body()
				default:
					j.Clear("ns1", g == 0)
					if g == 3 {
						m.Reset()
					}
				}
			}
		}()
	}
	wg.Wait()
}

// H9: a listing is paged — the newest `limit` entries, and `next` to go on
// with older ones — never one giant body; 0 and anything above MaxLimit mean
// MaxLimit.
func TestQueryPages(t *testing.T) {
	j := New(MaxLimit + 5)
	for i := range MaxLimit + 3 {
		j.Add(entry("a", "RunGet", 200, base+float64(i)))
	}
	page := func(query string) (n int, next string) {
		t.Helper()
		q, _ := url.ParseQuery(query)
		body, err := j.Query("a", q)
		if err != nil {
			t.Fatalf("%s: error %d %s", query, err.Status, err.Message)
		}
		var out struct {
			Requests []json.RawMessage `json:"requests"`
			Next     *string           `json:"next"`
		}
		if uerr := json.Unmarshal(body, &out); uerr != nil {
			t.Fatal(uerr)
		}
		if out.Next != nil {
			next = *out.Next
		}
		return len(out.Requests), next
	}
	for _, c := range []struct {
		query string
		n     int
		next  string
	}{
		{"", DefaultLimit, "9004"},
		{"limit=0", MaxLimit, "4"},
		{"limit=99999999999999999999999", MaxLimit, "4"},
		{"limit=10003", MaxLimit, "4"},
		{"limit=3&cursor=4", 3, ""},
		{"limit=2&cursor=4", 2, "2"},
		{"limit=2&cursor=2", 1, ""},
		{"cursor=1", 0, ""},
	} {
		if n, next := page(c.query); n != c.n || next != c.next {
			t.Errorf("%q: %d entries, next %q; want %d, %q", c.query, n, next, c.n, c.next)
		}
	}
	for _, bad := range []string{"cursor=x", "cursor=0", "cursor=-1", "cursor=99999999999999999999999"} {
		q, _ := url.ParseQuery(bad)
		if _, err := j.Query("a", q); err == nil || err.Status != 400 || err.Message != "cursor: expected the next of a previous page" {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestCount(t *testing.T) {
	j := New(10)
	j.Add(entry("a", "RunCreate", 202, base))
	j.Add(entry("b", "RunCreate", 202, base+1))
	j.Add(entry("a", "RunGet", 200, base+2))
	j.Add(entry("a", "", 404, base+3))
	j.Add(entry("a", "RunGet", 0, base+4))
	for _, c := range []struct {
		name string
		ns   string
		all  bool
		f    Filter
		want int
	}{
		{"everything of a", "a", false, Filter{}, 4},
		{"every namespace", "", true, Filter{}, 5},
		{"operation", "a", false, Filter{OperationID: "RunGet"}, 2},
		{"method any case", "", true, Filter{Method: "get"}, 5},
		{"path prefix", "a", false, Filter{PathPrefix: "/mis"}, 1},
		{"status", "a", false, Filter{Status: 404, HasStatus: true}, 1},
		{"dropped", "a", false, Filter{Status: 0, HasStatus: true}, 1},
		{"no such namespace", "zzz", false, Filter{}, 0},
	} {
		if got := j.Count(c.ns, c.all, c.f); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
