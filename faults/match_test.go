package faults

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// countingDraw returns a draw function yielding the given values in turn and
// a pointer to the number of calls.
func countingDraw(t *testing.T, vals ...float64) (func() float64, *int) {
	n := 0
	return func() float64 {
		if n >= len(vals) {
			t.Fatalf("draw called %d times, only %d values", n+1, len(vals))
		}
		n++
		return vals[n-1]
	}, &n
}

func zero() float64 { return 0 }

func TestMatchSelectors(t *testing.T) {
	get := Request{NS: "a", OperationID: "RunGet", Method: "GET", Path: "/v1/runs/example"}
	tests := []struct {
		name string
		rule string
		ns   string // admin namespace of the rule
		req  Request
		fire bool
	}{
		// acceptance 91: the rule defaults to the admin namespace
		{"own namespace", `{"operationId":"RunGet","status":503}`, "a", get, true},
		{"other namespace", `{"operationId":"RunGet","status":503}`, "a", Request{NS: "b", OperationID: "RunGet", Method: "GET", Path: "/v1/runs/example"}, false},
		{"star namespace", `{"namespace":"*","status":503}`, "a", Request{NS: "zzz", Method: "GET", Path: "/"}, true},
		{"other operation", `{"operationId":"RunCreate","status":503}`, "a", get, false},
		{"operationId never matches unmatched", `{"operationId":"","status":503}`, "a", Request{NS: "a", Method: "GET", Path: "/missing"}, false},
		{"no operationId matches unmatched", `{"status":503}`, "a", Request{NS: "a", Method: "GET", Path: "/missing"}, true},
		{"method case-insensitive", `{"method":"get","status":503}`, "a", get, true},
		{"method differs", `{"method":"POST","status":503}`, "a", get, false},
		{"path prefix", `{"pathPrefix":"/v1/runs/","status":503}`, "a", get, true},
		{"path prefix differs", `{"pathPrefix":"/v1/runs/x","status":503}`, "a", get, false},
		{"rate 0 never fires", `{"status":503,"rate":0}`, "a", get, false},
		{"count 0 never fires", `{"status":503,"count":0}`, "a", get, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			mustAdd(t, s, tc.ns, tc.rule)
			out := s.Match(tc.req, zero)
			if (out.Response != nil) != tc.fire {
				t.Fatalf("fired = %v, want %v", out.Response != nil, tc.fire)
			}
			if tc.fire && out.FaultID != "fault_1" {
				t.Fatalf("FaultID %q", out.FaultID)
			}
		})
	}
}

func TestFaultResponse(t *testing.T) {
	tests := []struct {
		name string
		rule string
		want Response
	}{
		// acceptance 91
		{"object body", `{"status":503,"body":{"message":"synthetic outage"}}`,
			Response{Status: 503, Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(`{"message":"synthetic outage"}`)}},
		// acceptance 92
		{"null body", `{"status":500,"body":null}`, Response{Status: 500, NoBody: true}},
		{"null body keeps rule headers", `{"status":204,"body":null,"headers":{"X-A":"1"}}`,
			Response{Status: 204, Header: [][2]string{{"X-A", "1"}}, NoBody: true}},
		{"absent body", `{"status":500}`,
			Response{Status: 500, Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(`{"detail":"Injected by Mockingbird"}`)}},
		{"string body as is", `{"status":502,"body":"plain \"text\"\n","headers":{"content-type":"text/plain"}}`,
			Response{Status: 502, Header: [][2]string{{"content-type", "text/plain"}}, Body: []byte("plain \"text\"\n")}},
		{"lone surrogate sent as U+FFFD", `{"status":502,"body":"a\ud800b"}`,
			Response{Status: 502, Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte("a\uFFFDb")}},
		{"vendor numbers", `{"status":500,"body":[1.0,-0,1e16]}`,
			Response{Status: 500, Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(`[1.0,0,1e+16]`)}},
		{"rule headers after default", `{"status":429,"headers":{"Retry-After":"1","retry-after":"2"}}`,
			Response{Status: 429, Header: [][2]string{{"Content-Type", "application/json"}, {"retry-after", "2"}}, Body: []byte(`{"detail":"Injected by Mockingbird"}`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			mustAdd(t, s, "default", tc.rule)
			out := s.Match(Request{NS: "default", OperationID: "RunGet", Method: "GET", Path: "/v1/runs/x"}, zero)
			if out.Response == nil {
				t.Fatal("no response")
			}
			if !reflect.DeepEqual(*out.Response, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", *out.Response, tc.want)
			}
		})
	}
}

// acceptance 93: seed 42, rate 0.5 → only the second of three polls is faulted.
func TestMatchRateSeeded(t *testing.T) {
	s := NewStore()
	mustAdd(t, s, "default", `{"operationId":"RunGet","status":500,"rate":0.5}`)
	rng := runs.RNG{State: runs.SeedFromString("42")}
	var fired []bool
	for range 3 {
		out := s.Match(Request{NS: "default", OperationID: "RunGet", Method: "GET", Path: "/v1/runs/x"}, rng.Next)
		fired = append(fired, out.Response != nil)
	}
	if want := []bool{false, true, false}; !reflect.DeepEqual(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	if want := `{"faults":[{"namespace":"default","operationId":"RunGet","status":500,"rate":0.5,"id":"fault_1","remaining":null,"hits":1}]}`; string(s.List()) != want {
		t.Fatalf("list %s", s.List())
	}
}

// The draw is taken for every matching rule, even at rate 1, and not for rules
// that do not match or are used up (controls.md §6.5 steps 1–3).
func TestMatchDraws(t *testing.T) {
	s := NewStore()
	mustAdd(t, s, "default", `{"operationId":"RunCreate","status":500}`) // does not match
	mustAdd(t, s, "default", `{"delayMs":5,"count":1}`)                  // matches once
	mustAdd(t, s, "default", `{"effect":"e","rate":1}`)                  // matches
	req := Request{NS: "default", OperationID: "RunGet", Method: "GET", Path: "/"}
	draw, n := countingDraw(t, 0.99, 0.99, 0.5)
	s.Match(req, draw)
	if *n != 2 {
		t.Fatalf("first request drew %d times, want 2", *n)
	}
	s.Match(req, draw) // the count-1 rule is used up: one draw
	if *n != 3 {
		t.Fatalf("second request drew %d more times, want 1", *n-2)
	}
}

// acceptance 97: count 3 fires three times; remaining 3 → 0, hits 0 → 3.
func TestMatchCount(t *testing.T) {
	s := NewStore()
	v, _ := parse(t, `{"count":3}`)
	if _, err := s.ApplyPreset("default", "hermes_throttled", v, true); err != nil {
		t.Fatal(err)
	}
	counters := func() string {
		o, _ := runs.Parse(s.List())
		f := o.Obj.Vals[0].Arr[0].Obj
		r, _ := f.Get("remaining")
		h, _ := f.Get("hits")
		return string(runs.MarshalValue(r)) + "/" + string(runs.MarshalValue(h))
	}
	req := Request{NS: "default", OperationID: "RunCreate", Method: "POST", Path: "/v1/runs"}
	var got []string
	var statuses []int
	got = append(got, counters())
	for range 4 {
		out := s.Match(req, zero)
		st := 202
		if out.Response != nil {
			st = out.Response.Status
		}
		statuses = append(statuses, st)
		got = append(got, counters())
	}
	if want := []int{429, 429, 429, 202}; !reflect.DeepEqual(statuses, want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
	if want := []string{"3/0", "2/1", "1/2", "0/3", "0/3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("remaining/hits %v, want %v", got, want)
	}
	rh := s.Match(req, zero)
	if rh.Response != nil || rh.FaultID != "" {
		t.Fatalf("used-up rule still fires: %+v", rh)
	}
}

func TestMatchOutcome(t *testing.T) {
	req := Request{NS: "default", OperationID: "RunGet", Method: "GET", Path: "/v1/runs/x"}
	tests := []struct {
		name    string
		rules   []string
		delay   time.Duration
		drop    bool
		status  int // 0 = no response
		effects []string
		faultID string
	}{
		// acceptance 98
		{name: "drop", rules: []string{`{"drop":true,"operationId":"RunGet"}`}, drop: true, faultID: "fault_1"},
		{name: "drop wins over status", rules: []string{`{"drop":true,"status":500}`}, drop: true, faultID: "fault_1"},
		{name: "delay-only is never the faultId", rules: []string{`{"delayMs":1000}`}, delay: time.Second},
		{name: "latencyMs alias", rules: []string{`{"latencyMs":3}`}, delay: 3 * time.Millisecond},
		{name: "delayMs wins over latencyMs", rules: []string{`{"delayMs":1,"latencyMs":7}`}, delay: time.Millisecond},
		{name: "zero delay", rules: []string{`{"delayMs":0}`}},
		{name: "delays add up and later rules still match",
			rules: []string{`{"delayMs":10}`, `{"id":"e1","effect":"hermes.x"}`, `{"id":"e2","effect":"hermes.y","delayMs":5}`, `{"id":"s","status":503,"delayMs":1}`, `{"id":"after","status":500}`},
			delay: 16 * time.Millisecond, status: 503, effects: []string{"hermes.x", "hermes.y"}, faultID: "s"},
		{name: "effect-only records the first effect rule",
			rules: []string{`{"delayMs":1}`, `{"id":"e1","effect":"hermes.accepted_drop"}`, `{"id":"e2","effect":"hermes.steer_refused"}`},
			delay: time.Millisecond, effects: []string{"hermes.accepted_drop", "hermes.steer_refused"}, faultID: "e1"},
		{name: "answering rule with effect", rules: []string{`{"id":"r","effect":"z","status":500}`}, status: 500, effects: []string{"z"}, faultID: "r"},
		{name: "longest delays add up", rules: []string{`{"delayMs":600000}`, `{"delayMs":6e5}`}, delay: 20 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			for _, r := range tc.rules {
				mustAdd(t, s, "default", r)
			}
			out := s.Match(req, zero)
			st := 0
			if out.Response != nil {
				st = out.Response.Status
			}
			var effects []string
			for _, e := range out.Effects {
				effects = append(effects, e.Name)
			}
			if out.Delay != tc.delay || out.Drop != tc.drop || st != tc.status || !reflect.DeepEqual(effects, tc.effects) ||
				out.FaultID != tc.faultID {
				t.Fatalf("got delay %v drop %v status %d effects %v faultID %q",
					out.Delay, out.Drop, st, effects, out.FaultID)
			}
		})
	}
}

func TestEffectParams(t *testing.T) {
	s := NewStore()
	mustAdd(t, s, "default", `{"effect":"a"}`)
	mustAdd(t, s, "default", `{"effect":"b","params":{"n":1.0}}`)
	out := s.Match(Request{NS: "default", Method: "GET", Path: "/"}, zero)
	var got []string
	for _, e := range out.Effects {
		got = append(got, e.Name+"="+string(runs.MarshalValue(e.Params)))
	}
	if want := []string{"a={}", `b={"n":1.0}`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("effects %v, want %v", got, want)
	}
}

func TestMatchNoRulesDoesNotDraw(t *testing.T) {
	s := NewStore()
	out := s.Match(Request{NS: "default", Method: "GET", Path: "/"}, func() float64 { t.Fatal("draw without rules"); return 0 })
	if !reflect.DeepEqual(out, Outcome{}) {
		t.Fatalf("outcome %+v", out)
	}
	if n := testing.AllocsPerRun(100, func() { s.Match(Request{NS: "default", Method: "GET", Path: "/"}, zero) }); n != 0 {
		t.Fatalf("Match with no rules allocates %v times", n)
	}
}

func BenchmarkMatch(b *testing.B) {
	req := Request{NS: "default", OperationID: "RunGet", Method: "GET", Path: "/v1/runs/run_x"}
	for _, bc := range []struct {
		name  string
		rules []string
	}{
		{"rules=0", nil},
		{"rules=3", []string{
			`{"operationId":"RunCreate","status":429}`,
			`{"method":"POST","effect":"hermes.steer_refused"}`,
			`{"pathPrefix":"/v1/runs/","rate":0.5,"status":503}`,
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := NewStore()
			for _, r := range bc.rules {
				v, _ := runs.Parse([]byte(r))
				if _, err := s.Add("default", v, true); err != nil {
					b.Fatal(err)
				}
			}
			rng := runs.RNG{}
			b.ReportAllocs()
			for b.Loop() {
				s.Match(req, rng.Next)
			}
		})
	}
}

// Match, Add, List and Delete may run concurrently (run with -race).
func TestConcurrentUse(t *testing.T) {
	s := NewStore()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				switch (g + i) % 4 {
				case 0:
					v, _ := runs.Parse([]byte(`{"status":500,"count":1}`))
					s.Add("default", v, true)
				case 1:
					s.Delete("")
				case 2:
					s.List()
				default:
					s.Match(Request{NS: "default", Method: "GET", Path: "/"}, zero)
				}
			}
		}()
	}
	wg.Wait()
}
