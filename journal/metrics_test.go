package journal

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

func TestMetrics(t *testing.T) {
	var m Metrics // the zero value is ready
	if got, want := string(m.Body()), `{"requests":0,"byOperation":{},"unmatched":[],"faults":0,"totalDurationMs":0}`; got != want {
		t.Fatalf("empty: %s", got)
	}
	add := func(op, method, path string, status int, ms float64, fault string) {
		m.Record(Entry{Namespace: "default", OperationID: op, Method: method, Path: path, Status: status, DurationMs: ms, FaultID: fault})
	}
	// acceptance 175: one 202 start and one faulted poll
	add("RunCreate", "POST", "/v1/runs", 202, 0.1, "")
	add("RunGet", "GET", "/v1/runs/x", 503, 0.2, "fault_1")
	// acceptance 174: an unmatched request
	add("", "GET", "/missing", 404, 1.005, "")
	add("", "GET", "/b", 404, 0, "")
	add("", "GET", "/b", 404, 0, "")
	add("", "DELETE", "/a", 404, 0, "")
	add("", "GET", "/a", 404, 0, "")
	add("RunCreate", "POST", "/v1/runs", 202, 0.426, "")
	want := `{"requests":8,"byOperation":{"(unmatched) 404":5,"RunCreate 202":2,"RunGet 503":1},` +
		`"unmatched":[{"method":"GET","path":"/b","count":2},{"method":"DELETE","path":"/a","count":1},{"method":"GET","path":"/a","count":1},{"method":"GET","path":"/missing","count":1}],` +
		`"faults":1,"totalDurationMs":1.73}`
	if got := string(m.Body()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	s := m.Snapshot()
	if s.Requests != 8 || s.Faults != 1 || len(s.ByOperation) != 3 || s.ByOperation[1] != (OperationCount{"RunCreate", 202, 2}) ||
		s.ByOperation[0].Key() != "(unmatched) 404" || s.Unmatched[0] != (UnmatchedCount{"GET", "/b", 2}) {
		t.Fatalf("snapshot %+v", s)
	}
	m.Reset()
	if got, want := string(m.Body()), `{"requests":0,"byOperation":{},"unmatched":[],"faults":0,"totalDurationMs":0}`; got != want {
		t.Fatalf("after reset: %s", got)
	}
	add("RunGet", "GET", "/v1/runs/x", 200, 0.1, "")
	add("RunGet", "GET", "/v1/runs/x", 200, 0.2, "")
	if got, want := string(m.Body()), `{"requests":2,"byOperation":{"RunGet 200":2},"unmatched":[],"faults":0,"totalDurationMs":0.30000000000000004}`; got != want {
		t.Fatalf("JS sum: %s", got)
	}
}

// Entries carry only the keys of controls.md §7.1 whatever the caller fills
// in (acceptance 170, 171 at the data level: there is no field for bodies,
// queries, keys or tokens).
func TestPrivacyKeys(t *testing.T) {
	allowed := map[string]bool{"service": true, "namespace": true, "operationId": true, "method": true, "path": true, "status": true,
		"durationMs": true, "unmatched": true, "faultId": true, "ids": true, "accepted": true, "checkpoint": true, "request": true, "issues": true, "at": true}
	var e Entry
	// Fill every field of Entry with a non-zero value by reflection, so a field
	// added later without a rendering rule is caught here.
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64:
			f.SetInt(400)
		case reflect.Float64:
			f.SetFloat(base)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			f.Set(reflect.ValueOf(&RequestMeta{ContentType: strp("a"), TransferEncoding: strp("b"), BodyBytes: i64p(3)}))
		case reflect.Slice:
			f.Set(reflect.ValueOf([]Issue{{"body", "/input"}}))
		default:
			t.Fatalf("field %s of kind %s has no rule here", v.Type().Field(i).Name, f.Kind())
		}
	}
	j := New(1)
	j.Add(e)
	body, _ := j.Query("x", url.Values{})
	pv, err := runs.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := pv.Obj.Get("requests")
	if len(reqs.Arr) != 1 {
		t.Fatalf("body %s", body)
	}
	got := reqs.Arr[0].Obj.Keys
	for _, k := range got {
		if !allowed[k] {
			t.Errorf("unexpected key %q", k)
		}
	}
	if want := "service namespace operationId method path status durationMs unmatched faultId ids accepted checkpoint request issues at"; strings.Join(got, " ") != want {
		t.Fatalf("keys %v", got)
	}
}

// The journal is the one place durationMs is rounded (controls.md §7.1, §9):
// callers pass raw milliseconds, Add and Record round them the same way, so
// an entry's durationMs equals its share of totalDurationMs.
func TestDurationRoundedByJournal(t *testing.T) {
	tests := []struct {
		raw  float64
		want string
	}{
		{0.123456789, "0.12"},
		{0.004999999, "0"},
		{0.005000001, "0.01"},
		{3.14159, "3.14"},
		{2.345, "2.35"}, // 2.345*100 is 234.50000000000003 → 235
		{1.005, "1"},    // 1.005*100 is 100.49999999999999 → 100
		{12.3456, "12.35"},
		{1000, "1000"},
	}
	for _, tc := range tests {
		t.Run(runs.FormatJSNumber(tc.raw), func(t *testing.T) {
			j := New(1)
			var m Metrics
			e := entry("default", "RunGet", 200, base)
			e.DurationMs = tc.raw
			j.Add(e)
			m.Record(e)
			body, _ := j.Query("default", nil)
			if !strings.Contains(string(body), `"durationMs":`+tc.want+`,`) {
				t.Fatalf("journal %s, want durationMs %s", body, tc.want)
			}
			if got := runs.FormatJSNumber(m.Snapshot().TotalDurationMs); got != tc.want {
				t.Fatalf("totalDurationMs %s, want %s", got, tc.want)
			}
		})
	}
}
