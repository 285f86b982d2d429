package emulator_test

import (
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// hardening H3 over HTTP: reads and 404s of unknown namespaces create
// nothing; a change that would create namespace N+1 answers 429 with the
// admin envelope, and changes nothing.
func TestMaxNamespaces(t *testing.T) {
	x := newH(t, emulator.Options{MaxNamespaces: 1})
	x.freeze()
	x.ns = "ghost"
	x.want(x.get("/v1/runs/run_x"), 404, hermesErr("Run not found: run_x", "run_not_found"))
	x.want(x.get("/v1/nowhere"), 404, "")
	x.ns = ""
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":[]}`)
	x.ns = "a"
	x.start()
	x.ns = "b"
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 429, adminErr("too many namespaces (max 1)"))
	x.want(x.post("/__admin/checkpoints", ""), 429, adminErr("too many namespaces (max 1)"))
	x.ns = ""
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":["a"]}`)
}
