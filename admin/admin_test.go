package admin

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/handlers"
)

// testAdmin returns a control plane over a fresh fault store only: enough for
// the /__admin/faults routes, which touch nothing else.
func testAdmin() (*Admin, *faults.Store) {
	st := faults.NewStore()
	return New(Deps{Faults: st, MaxBodyBytes: 1 << 20, Version: "test"}), st
}

// adminDo sends one control request through ServeHTTP (no listener).
func adminDo(a *Admin, method, target, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	w := httptest.NewRecorder()
	path := target
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	a.ServeHTTP(w, r, path)
	return w
}

func adminEnvelope(msg string) string {
	return `{"error":{"type":"mockingbird_admin","message":"` + msg + `"}}`
}

// controls §6.3: DELETE /__admin/faults removes every rule only when the id
// parameter is absent; ?id=<id> — even an empty id — removes that rule or
// answers 404 `no fault <id>` (acceptance 95).
func TestDeleteFaults(t *testing.T) {
	tests := []struct {
		name   string
		target string
		status int
		body   string
		left   string // ids left, comma-separated
	}{
		{"absent id removes every rule", "/__admin/faults", 200, `{"status":"ok"}`, ""},
		{"one id", "/__admin/faults?id=x", 200, `{"status":"ok"}`, "fault_1"},
		{"unknown id", "/__admin/faults?id=nope", 404, adminEnvelope("no fault nope"), "fault_1,x"},
		{"empty id is an id", "/__admin/faults?id=", 404, adminEnvelope("no fault "), "fault_1,x"},
		{"bare id is an empty id", "/__admin/faults?id", 404, adminEnvelope("no fault "), "fault_1,x"},
		{"a repeated id is refused", "/__admin/faults?id=x&id=fault_1", 400, adminEnvelope("id: expected once"), "fault_1,x"},
		{"a long id is quoted cut (H9)", "/__admin/faults?id=" + strings.Repeat("y", 3000), 404, adminEnvelope("no fault " + strings.Repeat("y", 1024)), "fault_1,x"},
		{"id with other parameters", "/__admin/faults?namespace=a&id=", 404, adminEnvelope("no fault "), "fault_1,x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, st := testAdmin()
			for _, b := range []string{`{"status":500}`, `{"status":501,"id":"x"}`} {
				if w := adminDo(a, "POST", "/__admin/faults", b); w.Code != 201 {
					t.Fatalf("add %s: %d %s", b, w.Code, w.Body)
				}
			}
			w := adminDo(a, "DELETE", tc.target, "")
			if w.Code != tc.status || w.Body.String() != tc.body {
				t.Fatalf("got %d %s, want %d %s", w.Code, w.Body, tc.status, tc.body)
			}
			if got := faultIDs(t, st); got != tc.left {
				t.Fatalf("rules left %q, want %q", got, tc.left)
			}
		})
	}
}

// faultIDs lists the ids of the stored rules, in order.
func faultIDs(t *testing.T, st *faults.Store) string {
	t.Helper()
	var ids []string
	list := string(st.List())
	for {
		i := strings.Index(list, `"id":"`)
		if i < 0 {
			break
		}
		list = list[i+len(`"id":"`):]
		ids = append(ids, list[:strings.IndexByte(list, '"')])
	}
	return strings.Join(ids, ",")
}

// Every admin error goes through the one renderer (handlers.WriteError,
// STYLE.md rule 3): the admin envelope, Content-Type application/json even
// when a route asked for another type, no Retry-After, and the x-mockingbird
// stamp set by ServeHTTP.
func TestErrorRendering(t *testing.T) {
	tests := []struct {
		name, method, target, body string
		status                     int
		msg                        string
	}{
		{"unknown route", "GET", "/__admin/nope", "", 404, "no admin route GET /nope; GET /__admin lists them"},
		{"invalid JSON", "POST", "/__admin/faults", "{", 400, "request body is not valid JSON"},
		{"fault field", "POST", "/__admin/faults", `{"status":150}`, 400, "fault field status has the wrong type"},
		{"unknown preset", "POST", "/__admin/faults/presets/nope", "", 404, "no fault preset nope; GET /__admin/faults/presets"},
		{"a long preset name is quoted cut (H9)", "POST", "/__admin/faults/presets/" + strings.Repeat("p", 3000), "", 404, "no fault preset " + strings.Repeat("p", 1024) + "; GET /__admin/faults/presets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := testAdmin()
			w := adminDo(a, tc.method, tc.target, tc.body)
			if w.Code != tc.status || w.Body.String() != adminEnvelope(tc.msg) {
				t.Fatalf("got %d %s, want %d %s", w.Code, w.Body, tc.status, adminEnvelope(tc.msg))
			}
			h := w.Header()
			if got := h.Values("Content-Type"); len(got) != 1 || got[0] != "application/json" {
				t.Fatalf("Content-Type %q", got)
			}
			if got := h.Get("X-Mockingbird"); got != "hermes@test; ns=default" {
				t.Fatalf("X-Mockingbird %q", got)
			}
			if _, ok := h["Retry-After"]; ok {
				t.Fatalf("Retry-After on an admin error: %q", h.Get("Retry-After"))
			}
		})
	}
}

// A control request whose body does not arrive within the read timeout is
// answered 400 `request body is not valid JSON` instead of holding the
// connection for ever (as the vendor pipeline bounds its body read).
func TestBodyReadTimeout(t *testing.T) {
	st := faults.NewStore()
	a := New(Deps{Faults: st, Bodies: handlers.NewBodies(1<<20, 0, 100*time.Millisecond), Version: "test"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.ServeHTTP(w, r, r.URL.Path)
	}))
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Promise 100 bytes, send 9, then stall.
	if _, err := io.WriteString(conn, "POST /__admin/faults HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"status\""); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body stalls: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want := adminEnvelope("request body is not valid JSON"); resp.StatusCode != 400 || string(body) != want {
		t.Fatalf("got %d %s, want 400 %s", resp.StatusCode, body, want)
	}
	if got := string(st.List()); got != `{"faults":[]}` {
		t.Fatalf("a rule was stored: %s", got)
	}
}
