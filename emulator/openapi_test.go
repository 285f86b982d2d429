package emulator_test

import (
	"bytes"
	"testing"

	hermesemulator "github.com/hermes-emulator/hermes-emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// GET /openapi.yaml serves the embedded contract like /health: control plane,
// never journaled, counted or faulted, not gated by the admin key (issue 8).
func TestContractServed(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{AdminKey: "adm"})
		x.inproc = inproc
		admin := []string{"X-Mockingbird-Admin-Key", "adm"}
		x.want(x.post("/__admin/faults", `{"pathPrefix":"/","status":500}`, admin...), 201, "")

		tests := []struct {
			path  string
			hdr   []string
			stamp string
		}{
			{"/openapi.yaml", nil, "hermes@" + emulator.Version + "; ns=default"},
			{"/ns/a/openapi.yaml", nil, "hermes@" + emulator.Version + "; ns=a"},
			{"/openapi.yaml", []string{"X-Mockingbird-Namespace", "b"}, "hermes@" + emulator.Version + "; ns=b"},
			{"/openapi.yaml", []string{"X-Mockingbird-Namespace", "bad name"}, "hermes@" + emulator.Version},
		}
		for _, tt := range tests {
			r := x.get(tt.path, tt.hdr...)
			if r.Status != 200 || !bytes.Equal(r.Body, hermesemulator.OpenAPI) {
				t.Fatalf("inproc=%v GET %s: %d, %d bytes (want 200, %d bytes)", inproc, tt.path, r.Status, len(r.Body), len(hermesemulator.OpenAPI))
			}
			if got := r.Header.Get("Content-Type"); got != "application/yaml" {
				t.Fatalf("Content-Type = %q", got)
			}
			if got := r.Header.Get("X-Mockingbird"); got != tt.stamp {
				t.Fatalf("GET %s %v: x-mockingbird = %q, want %q", tt.path, tt.hdr, got, tt.stamp)
			}
		}
		x.want(x.get("/__admin/metrics", admin...), 200,
			`{"requests":0,"byOperation":{},"unmatched":[],"faults":0,"totalDurationMs":0}`)

		// Any other method is a vendor request: unmatched, faulted like any other.
		x.want(x.post("/openapi.yaml", ""), 500, `{"detail":"Injected by Mockingbird"}`)
		x.want(x.do("DELETE", "/__admin/faults", "", admin...), 200, `{"status":"ok"}`)
		x.want(x.post("/openapi.yaml", ""), 404, `{"message":"page not found"}`)
		x.want(x.get("/openapi.yaml/"), 404, `{"message":"page not found"}`)
		r := x.get("/__admin/metrics", admin...)
		if s := r.String(); !bytes.Contains(r.Body, []byte(`"unmatched":[{"method":"POST","path":"/openapi.yaml","count":2},{"method":"GET","path":"/openapi.yaml/","count":1}]`)) {
			t.Fatalf("metrics: %s", s)
		}
	}
}
