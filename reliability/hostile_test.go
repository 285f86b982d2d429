//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// Hostile input against the running binary: every request gets the spec's
// answer or a clear error, and the process still answers /health after each
// (wire.md §2, runs-api §3 step 8, §6.1, §14.4, controls §1).
func TestHostileInput(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "hostile.db"))
	c := newClient(4)
	invalidJSON := hermesErr("Invalid JSON", "")
	tooLarge := hermesErr("Request body too large.", "body_too_large")
	badKey := hermesErr("Idempotency-Key must be 1-255 visible ASCII characters", "invalid_idempotency_key")
	deep := func(n int, open, close string) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	million := "9" + strings.Repeat("0", 999_999)

	// First a run to address with the run-level routes.
	r := p.must(c, "POST", "/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "target")
	if r.status != 202 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	run := r.field("run_id")
	if r := p.must(c, "POST", "/__admin/hermes/runs/"+run+"/observe", `{"status":"running"}`); r.status != 200 {
		t.Fatalf("observe running: %d %s", r.status, r.body)
	}
	steerMissing := hermesErr("Missing non-empty steer text; expected 'input', 'message', or 'text'.", "invalid_steer_input")

	cases := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		want                     string // exact body; "" = any
	}{
		{"invalid UTF-8 in a string", "POST", "/v1/runs", "{\"input\":\"x\xff\xfe\xc0\xaf\"}", nil, 202, ""},
		{"invalid UTF-8, keyed", "POST", "/v1/runs", "{\"input\":\"x\xff\",\"\xed\xa0\x80\":1}", []string{"Idempotency-Key", "utf8"}, 202, ""},
		{"invalid UTF-8 outside strings", "POST", "/v1/runs", "{\"input\":\"x\"\xff}", nil, 400, invalidJSON},
		{"truncated UTF-8 at the end", "POST", "/v1/runs", "{\"input\":\"\xe2\x82", nil, 400, invalidJSON},
		{"BOM", "POST", "/v1/runs", "\xef\xbb\xbf{\"input\":\"synthetic\"}", []string{"Idempotency-Key", "bom"}, 202, ""},
		{"two BOMs", "POST", "/v1/runs", "\xef\xbb\xbf\xef\xbb\xbf{\"input\":\"synthetic\"}", nil, 400, invalidJSON},
		{"BOM only", "POST", "/v1/runs", "\xef\xbb\xbf", nil, 400, invalidJSON},
		{"lone surrogate, keyed", "POST", "/v1/runs", `{"input":"\ud800"}`, []string{"Idempotency-Key", "surrogate"}, 501,
			`{"error":{"message":"Mockingbird: lone Unicode surrogates cannot be fingerprinted by the pinned provider","type":"mockingbird_unsupported","param":null,"code":"operation_not_implemented"}}`},
		{"NaN", "POST", "/v1/runs", `{"input":"x","n":NaN}`, nil, 400, invalidJSON},
		{"100,000 nested arrays", "POST", "/v1/runs", `{"input":"x","a":` + deep(100_000, "[", "]") + `}`, nil, 400, invalidJSON},
		{"100,000 nested arrays as the root", "POST", "/v1/runs", deep(100_000, "[", "]"), nil, 400, invalidJSON},
		{"100,000 nested objects", "POST", "/v1/runs", `{"input":"x","a":` + deep(100_000, `{"a":`, "}") + `}`, nil, 400, invalidJSON},
		{"100,000 unclosed arrays", "POST", "/v1/runs", strings.Repeat("[", 100_000), nil, 400, invalidJSON},
		{"1,000 nested arrays (the limit)", "POST", "/v1/runs", `{"input":"x","a":` + deep(999, "[", "]") + `}`, nil, 202, ""},
		{"1,000,000-digit integer", "POST", "/v1/runs", `{"input":"x","n":` + million + `}`, nil, 202, ""},
		{"1,000,000-digit integer, keyed", "POST", "/v1/runs", `{"input":"x","n":-` + million + `}`, []string{"Idempotency-Key", "big"}, 202, ""},
		{"1,000,000-digit integer, keyed replay", "POST", "/v1/runs", `{"input":"x","n":-` + million + `}`, []string{"Idempotency-Key", "big"}, 202, ""},
		{"huge exponent", "POST", "/v1/runs", `{"input":"x","n":1e999999999999,"m":-1e-999999999999}`, []string{"Idempotency-Key", "exp"}, 202, ""},
		{"1,000,000-digit fraction", "POST", "/v1/runs", `{"input":"x","n":0.` + million + `}`, []string{"Idempotency-Key", "frac"}, 202, ""},
		{"1,000,000-character object key", "POST", "/v1/runs", `{"input":"x","` + strings.Repeat("k", 1_000_000) + `":1}`, []string{"Idempotency-Key", "longkey"}, 202, ""},
		{"200,000 keys", "POST", "/v1/runs", `{"input":"x"` + strings.Repeat(`,"k":1`, 200_000) + `}`, []string{"Idempotency-Key", "dupkeys"}, 202, ""},
		{"256-character Idempotency-Key", "POST", "/v1/runs", `{"input":"x"}`, []string{"Idempotency-Key", strings.Repeat("k", 256)}, 400, badKey},
		{"255-character Idempotency-Key", "POST", "/v1/runs", `{"input":"x"}`, []string{"Idempotency-Key", strings.Repeat("k", 255)}, 202, ""},
		{"non-ASCII Idempotency-Key", "POST", "/v1/runs", `{"input":"x"}`, []string{"Idempotency-Key", "k\xe9y"}, 400, badKey},
		{"long session key", "POST", "/v1/runs", `{"input":"x"}`, []string{"X-Hermes-Session-Key", strings.Repeat("s", 100_000)}, 501,
			`{"error":{"message":"Mockingbird: invalid memory-scope headers are outside the current subset","type":"mockingbird_unsupported","param":null,"code":"operation_not_implemented"}}`},
		{"200 KB header", "GET", "/v1/runs/" + run, "", []string{"X-Filler", strings.Repeat("h", 200_000)}, 200, ""},
		{"2 MB header", "GET", "/v1/runs/" + run, "", []string{"X-Filler", strings.Repeat("h", 2_000_000)}, 431, ""},
		{"long run id", "GET", "/v1/runs/" + strings.Repeat("r", 100_000), "", nil, 404, ""},
		{"10,000,000-byte body", "POST", "/v1/runs", `{"input":"x","pad":"` + strings.Repeat("p", 10_000_000-22) + `"}`, nil, 202, ""},
		{"10,000,001-byte body", "POST", "/v1/runs", `{"input":"x","pad":"` + strings.Repeat("p", 10_000_001-22) + `"}`, nil, 413, tooLarge},
		{"deep approval body", "POST", "/v1/runs/" + run + "/approval", deep(100_000, "[", "]"), nil, 400, invalidJSON},
		{"deep steer body", "POST", "/v1/runs/" + run + "/steer", deep(100_000, "[", "]"), nil, 400, steerMissing},
		{"deep steer list", "POST", "/v1/runs/" + run + "/steer", `{"input":` + strings.Repeat("[", 900) + `"deep"` + strings.Repeat("]", 900) + `}`, nil, 400, steerMissing},
		{"100,000-item steer list", "POST", "/v1/runs/" + run + "/steer", `{"input":[` + strings.Repeat(`"s",`, 100_000) + `"s"]}`, nil, 200,
			`{"object":"hermes.run.steer","run_id":"` + run + `","accepted":true}`},
		{"deep observe body", "POST", "/__admin/hermes/runs/" + run + "/observe", `{"status":"waiting_for_approval","approval":{"a":` + deep(100_000, "[", "]") + `}}`, nil, 400, ""},
		{"deep events body", "POST", "/__admin/hermes/runs/" + run + "/events", `{"events":` + deep(100_000, "[", "]") + `}`, nil, 400, ""},
		{"deep clock body", "POST", "/__admin/clock", deep(100_000, "[", "]"), nil, 400, ""},
		{"huge advance", "POST", "/__admin/clock", `{"advance":` + million + `}`, nil, 400, ""},
		{"deep faults body", "POST", "/__admin/faults", `{"status":500,"body":` + deep(100_000, "[", "]") + `}`, nil, 400, ""},
		{"10,000,001-byte admin body", "POST", "/__admin/clock", `{"advance":0,"pad":"` + strings.Repeat("p", 10_000_001-22) + `"}`, nil, 413,
			`{"error":{"type":"mockingbird_admin","message":"request body too large"}}`},
	}
	for _, tc := range cases {
		r, err := call(context.Background(), c, tc.method, p.url+tc.path, tc.body, tc.hdr...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		} else if r.status != tc.status || (tc.want != "" && string(r.body) != tc.want) {
			t.Errorf("%s: got %d %.300s\nwant %d %.300s", tc.name, r.status, r.body, tc.status, tc.want)
		}
		p.healthy(c, tc.name)
	}

	// Raw requests the Go client would refuse to send.
	raws := []struct {
		name, head string
		body       io.Reader
		status     int
		want       string
	}{
		{"10,000,001-byte body, sent", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 10000001\r\n\r\n",
			strings.NewReader(strings.Repeat("x", 10_000_001)), 413, tooLarge},
		{"10,000,001-byte chunked body", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
			strings.NewReader(fmt.Sprintf("%x\r\n", 10_000_001) + strings.Repeat("x", 10_000_001) + "\r\n0\r\n\r\n"), 413, tooLarge},
		{"huge Content-Length", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", nil, 400, ""},
		{"negative Content-Length", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", nil, 400, ""},
		{"Content-Length with a sign", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\n{\"a\":", nil, 400, ""},
		{"NUL in a header", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\x00b\r\nContent-Length: 2\r\n\r\n{}", nil, 400, ""},
		{"Latin-1 Idempotency-Key bytes", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nIdempotency-Key: \xff\xfe\r\nContent-Length: 13\r\n\r\n{\"input\":\"x\"}", nil, 400, badKey},
		{"bad chunk size", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", nil, 400, ""},
		{"truncated body, then close", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"input\"", nil, -1, ""},
	}
	for _, tc := range raws {
		rc := tc.body
		if tc.status == -1 {
			// The client gives up half-way: the server must just drop the request.
			if st, b, err := p.rawHalf(tc.head); err == nil {
				t.Logf("%s: answered %d %s", tc.name, st, b)
			}
			p.healthy(c, tc.name)
			continue
		}
		st, b, err := p.raw(tc.head, rc)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		} else if st != tc.status || (tc.want != "" && string(b) != tc.want) {
			t.Errorf("%s: got %d %.300s\nwant %d %s", tc.name, st, b, tc.status, tc.want)
		}
		p.healthy(c, tc.name)
	}
	// The keyed runs above still replay after all this.
	r = p.must(c, "POST", "/v1/runs", `{"input":"x","n":-`+million+`}`, "Idempotency-Key", "big")
	if r.status != 202 || r.field("status") != "queued" || r.header.Get("Idempotency-Replayed") != "true" {
		t.Fatalf("replay of the big-number run: %d %s", r.status, r.body)
	}
}
