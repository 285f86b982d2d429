package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

const key = "s3cret"

func get(t *testing.T, h http.Handler, method, target string, header http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServe: the console's files with their Content-Types, through the
// emulator's pipeline, with an admin key configured and none sent (the
// shell holds no data: docs/console.md).
func TestServe(t *testing.T) {
	h := emulatortest.New(t, emulator.Options{NoListener: true, AdminKey: key}).Handler()
	cases := []struct {
		method, path string
		status       int
		typ          string
		contains     string
		header       [2]string // a header the answer must carry
	}{
		{"GET", "/__admin/ui", 301, "", "", [2]string{"Location", "ui/"}},
		{"GET", "/__admin/ui/", 200, "text/html; charset=utf-8", "<title>Hermes emulator console</title>", [2]string{"X-Mockingbird", "hermes@" + emulator.Version + "; ns=default"}},
		{"GET", "/__admin/ui/index.html", 200, "text/html; charset=utf-8", `<script type="module" src="app.js">`, [2]string{}},
		{"GET", "/__admin/ui/app.js", 200, "text/javascript; charset=utf-8", "stream.restart()", [2]string{}},
		{"GET", "/__admin/ui/api.js", 200, "text/javascript; charset=utf-8", "x-mockingbird-admin-key", [2]string{}},
		{"GET", "/__admin/ui/app.css", 200, "text/css; charset=utf-8", ":root", [2]string{}},
		{"GET", "/__admin/ui//app.css", 404, "text/plain; charset=utf-8", "no console file /app.css\n", [2]string{}},
		{"GET", "/__admin/ui/nope.js", 404, "text/plain; charset=utf-8", "no console file nope.js\n", [2]string{}},
		{"GET", "/__admin/ui/static/app.js", 404, "text/plain; charset=utf-8", "no console file static/app.js\n", [2]string{}},
		{"GET", "/__admin/ui/.hidden.js", 404, "text/plain; charset=utf-8", "no console file .hidden.js\n", [2]string{}},
		{"POST", "/__admin/ui/", 405, "text/plain; charset=utf-8", "the console answers GET and HEAD only\n", [2]string{"Allow", "GET, HEAD"}},
		{"GET", "/ns/t1/__admin/ui/", 200, "text/html; charset=utf-8", "<title>", [2]string{"X-Mockingbird", "hermes@" + emulator.Version + "; ns=t1"}},
		{"GET", "/__admin/uix", 401, "", "missing or wrong x-mockingbird-admin-key", [2]string{}},
	}
	for _, c := range cases {
		res := get(t, h, c.method, c.path, nil)
		b := body(t, res)
		if res.StatusCode != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, res.StatusCode, c.status)
		}
		if c.typ != "" && res.Header.Get("Content-Type") != c.typ {
			t.Errorf("%s %s: Content-Type %q, want %q", c.method, c.path, res.Header.Get("Content-Type"), c.typ)
		}
		if !strings.Contains(b, c.contains) {
			t.Errorf("%s %s: body %.80q does not contain %q", c.method, c.path, b, c.contains)
		}
		if c.header[0] != "" && res.Header.Get(c.header[0]) != c.header[1] {
			t.Errorf("%s %s: %s %q, want %q", c.method, c.path, c.header[0], res.Header.Get(c.header[0]), c.header[1])
		}
		if c.status != 401 && !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s %s: no Content-Security-Policy", c.method, c.path)
		}
	}
	head := get(t, h, "HEAD", "/__admin/ui/app.js", nil)
	if head.StatusCode != 200 || head.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || body(t, head) != "" {
		t.Errorf("HEAD app.js: %d %q, want 200 with no body", head.StatusCode, head.Header.Get("Content-Type"))
	}
}

// TestGuard: the console's files answer without the key; the data it shows
// does not, and loading the console journals nothing.
func TestGuard(t *testing.T) {
	h := emulatortest.New(t, emulator.Options{NoListener: true, AdminKey: key}).Handler()
	for _, p := range []string{"/__admin/ui/", "/__admin/ui/app.js", "/__admin/ui/runs.js"} {
		if res := get(t, h, "GET", p, nil); res.StatusCode != 200 {
			t.Errorf("GET %s without key: %d, want 200", p, res.StatusCode)
		}
	}
	withKey := http.Header{"X-Mockingbird-Admin-Key": {key}}
	for _, p := range []string{"/__admin/clock", "/__admin/faults", "/__admin/namespaces", "/__admin/requests?all=1"} {
		res := get(t, h, "GET", p, nil)
		want := `{"error":{"type":"mockingbird_admin","message":"missing or wrong x-mockingbird-admin-key"}}`
		if b := body(t, res); res.StatusCode != 401 || b != want {
			t.Errorf("GET %s without key: %d %s, want 401 %s", p, res.StatusCode, b, want)
		}
		if res := get(t, h, "GET", p, http.Header{"X-Mockingbird-Admin-Key": {"wrong"}}); res.StatusCode != 401 {
			t.Errorf("GET %s with a wrong key: %d, want 401", p, res.StatusCode)
		}
		if res := get(t, h, "GET", p, withKey); res.StatusCode != 200 {
			t.Errorf("GET %s with the key: %d, want 200", p, res.StatusCode)
		}
	}
	res := get(t, h, "GET", "/__admin/requests?all=1", withKey)
	if b := body(t, res); !strings.Contains(b, `"requests":[]`) {
		t.Errorf("journal after loading the console: %s, want no entries", b)
	}
}

// H9: a 404 quotes at most runs.EchoLimit bytes of the name asked for.
func TestServeEchoBound(t *testing.T) {
	h := emulatortest.New(t, emulator.Options{NoListener: true}).Handler()
	res := get(t, h, "GET", "/__admin/ui/"+strings.Repeat("x", 3000)+".js", nil)
	want := "no console file " + strings.Repeat("x", 1024) + "\n"
	if b := body(t, res); res.StatusCode != 404 || b != want {
		t.Fatalf("status %d, %d-byte body, want 404 and %d bytes", res.StatusCode, len(b), len(want))
	}
}
