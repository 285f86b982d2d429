package emulator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/admin"
	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// h drives one emulator in a test: over a real listener by default, or through
// Handler() in-process (inproc).
type h struct {
	t      *testing.T
	srv    *emulator.Server
	inproc bool
	ns     string // x-mockingbird-namespace for every request when set
}

func newH(t *testing.T, opts emulator.Options) *h {
	t.Helper()
	return &h{t: t, srv: emulatortest.New(t, opts)}
}

// res is a response as the tests read it.
type res struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r res) String() string { return string(r.Body) }

// JSON decodes the body into a generic value (numbers as json.Number).
func (r res) JSON(t *testing.T) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(r.Body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, r.Body)
	}
	return v
}

// field returns a top-level string field of a JSON object body.
func (r res) field(t *testing.T, k string) string {
	t.Helper()
	m, ok := r.JSON(t).(map[string]any)
	if !ok {
		t.Fatalf("body is not an object: %s", r.Body)
	}
	s, _ := m[k].(string)
	return s
}

// do sends method path with body and header pairs ("Name", "value", …).
func (x *h) do(method, path, body string, hdr ...string) res {
	x.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://emulator"+path, rd)
	if x.ns != "" {
		req.Header.Set("X-Mockingbird-Namespace", x.ns)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	if x.inproc {
		rec := httptest.NewRecorder()
		x.srv.Handler().ServeHTTP(rec, req)
		return x.checked(method, path, res{rec.Code, rec.Header(), rec.Body.Bytes()})
	}
	out, err := http.NewRequest(method, x.srv.URL()+path, rd)
	if err != nil {
		x.t.Fatal(err)
	}
	out.Header = req.Header
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		x.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		x.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return x.checked(method, path, res{resp.StatusCode, resp.Header, b})
}

// checked fails the test when a control-plane answer breaks admin.yaml
// (admin.CheckResponse); answers of paths that are no route are not checked.
func (x *h) checked(method, path string, r res) res {
	x.t.Helper()
	p, _, _ := strings.Cut(path, "?")
	if m := regexp.MustCompile(`^/ns/[^/]+(/.*)$`).FindStringSubmatch(p); m != nil {
		p = m[1]
	}
	if !(p == "/health" && method == "GET") && p != "/__admin" && !strings.HasPrefix(p, "/__admin/") {
		return r
	}
	if err := admin.CheckResponse(method, p, r.Status, r.Header, r.Body); err != nil && !strings.HasSuffix(err.Error(), "is not a route of admin.yaml") {
		x.t.Errorf("%s %s: %v", method, path, err)
	}
	return r
}

func (x *h) post(path, body string, hdr ...string) res { return x.do("POST", path, body, hdr...) }
func (x *h) get(path string, hdr ...string) res        { return x.do("GET", path, "", hdr...) }

// freeze sets the frozen base of acceptance.md: 1700000000000.
func (x *h) freeze() { x.clock(`{"set":1700000000000,"freeze":true}`) }

func (x *h) clock(body string) {
	x.t.Helper()
	x.want(x.post("/__admin/clock", body), 200, "")
}

func (x *h) advance(ms string) { x.clock(`{"advance":` + ms + `}`) }

// start submits {"input":"synthetic"} (with header pairs) and returns the run id.
func (x *h) start(hdr ...string) string {
	x.t.Helper()
	r := x.post("/v1/runs", `{"input":"synthetic"}`, hdr...)
	if r.Status != 202 {
		x.t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	return r.field(x.t, "run_id")
}

func (x *h) observe(id, body string) res {
	return x.post("/__admin/hermes/runs/"+id+"/observe", body)
}

func (x *h) restart(owner string) res {
	return x.post("/__admin/hermes/restart", `{"owner":"`+owner+`"}`)
}

// want checks the status and, when body is not "", the exact body bytes.
func (x *h) want(r res, status int, body string) {
	x.t.Helper()
	if r.Status != status || (body != "" && string(r.Body) != body) {
		x.t.Fatalf("got %d %s\nwant %d %s", r.Status, r.Body, status, body)
	}
}

// hermesErr is the Hermes envelope of acceptance.md with code null when code == "".
func hermesErr(msg, code string) string {
	c := "null"
	if code != "" {
		c = `"` + code + `"`
	}
	m, _ := json.Marshal(msg)
	return `{"error":{"message":` + string(m) + `,"type":"invalid_request_error","param":null,"code":` + c + `}}`
}

func adminErr(msg string) string {
	m, _ := json.Marshal(msg)
	return `{"error":{"type":"mockingbird_admin","message":` + string(m) + `}}`
}

func unsupportedErr(detail string) string {
	return `{"error":{"message":"Mockingbird: ` + detail + `","type":"mockingbird_unsupported","param":null,"code":"operation_not_implemented"}}`
}

// sameJSON compares two JSON texts by value.
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("got is not JSON: %s", got)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatalf("want is not JSON: %s", want)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// jsonKeys returns the top-level keys of a JSON object body in wire order.
func jsonKeys(t *testing.T, body []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", body)
	}
	var keys []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatalf("keys of %s: %v", body, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatalf("keys of %s: %v", body, err)
		}
	}
	return keys
}
