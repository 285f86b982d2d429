package emulator_test

import (
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// PUT /__admin/hermes/scenarios past what the sets of all namespaces hold
// together (scenarios.MaxHeldValues, the --scenarios default counted once):
// 409 admin envelope, declared in admin.yaml, and the namespace keeps the set
// it had; a DELETE gives its share back. A set of 300,000 numbers holds
// 300,009 values.
func TestScenarioSetsHeldBound(t *testing.T) {
	numbers := `{"scenarios":[{"name":"n","steps":[{"after":0,"approval":{"x":[` + strings.Repeat("0,", 300_000) + `0]}}]}]}`
	x := newH(t, emulator.Options{Scenarios: mustSet(t, numbers)})
	for _, ns := range []string{"a", "b"} {
		x.ns = ns
		x.want(x.do("PUT", "/__admin/hermes/scenarios", numbers), 200, `{"scenarios":1}`)
	}
	x.ns = "c"
	x.want(x.do("PUT", "/__admin/hermes/scenarios", numbers), 409,
		adminErr("scenario sets hold more than 1000000 values in all namespaces"))
	if r := x.get("/__admin/hermes/scenarios"); r.Status != 200 || string(r.Body) != numbers {
		t.Fatalf("c after a refused PUT: %d, not the default", r.Status)
	}
	x.ns = "a"
	x.want(x.do("DELETE", "/__admin/hermes/scenarios", ""), 200, `{"status":"ok"}`)
	x.ns = "c"
	x.want(x.do("PUT", "/__admin/hermes/scenarios", numbers), 200, `{"scenarios":1}`)
}
