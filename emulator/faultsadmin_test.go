package emulator_test

import (
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Review fixes of the fault control plane (controls.md §6) through the full
// HTTP stack.

// controls.md §6.1/§6.2: a fault status must be a final response; 100–199 would
// send an informational response followed by a default 200 (acceptance 94).
func TestFaultAdminStatusRange(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, body := range []string{`{"status":100}`, `{"status":199}`, `{"preset":"hermes_throttled","status":101}`} {
		x.want(x.post("/__admin/faults", body), 400, adminErr("fault field status has the wrong type"))
	}
	x.want(x.post("/__admin/faults/presets/hermes_draining", `{"status":150}`), 400, adminErr("fault field status has the wrong type"))
	x.want(x.get("/__admin/faults"), 200, `{"faults":[]}`)
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":200,"body":{"ok":true}}`), 201,
		`{"namespace":"default","operationId":"RunGet","status":200,"body":{"ok":true},"id":"fault_1"}`)
	x.want(x.get("/v1/runs/example"), 200, `{"ok":true}`)
}

// controls.md §6.3: only an absent id removes every rule; ?id= (present, empty)
// names the rule with id "" and answers 404 `no fault ` when there is none
// (acceptance 95).
func TestFaultAdminDeleteEmptyID(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":503}`), 201, "")
	x.want(x.do("DELETE", "/__admin/faults?id=", ""), 404, adminErr("no fault "))
	x.want(x.get("/__admin/faults"), 200,
		`{"faults":[{"namespace":"default","operationId":"RunGet","status":503,"id":"fault_1","remaining":null,"hits":0}]}`)
	x.want(x.do("DELETE", "/__admin/faults?id=fault_1", ""), 200, `{"status":"ok"}`)
	x.want(x.do("DELETE", "/__admin/faults?id=fault_1", ""), 404, adminErr("no fault fault_1"))
	x.want(x.get("/__admin/faults"), 200, `{"faults":[]}`)
}

// controls.md §6.2 literally: the automatic id is "fault_<number of rules + 1>",
// so after a delete it can repeat a stored rule's id, and the new rule then
// replaces that rule in place (§6.1) — the seed package's behaviour, kept.
func TestFaultAdminAutoIDRepeats(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/__admin/faults", `{"operationId":"RunCreate","status":500}`), 201, "")
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":503}`), 201,
		`{"namespace":"default","operationId":"RunGet","status":503,"id":"fault_2"}`)
	x.want(x.do("DELETE", "/__admin/faults?id=fault_1", ""), 200, `{"status":"ok"}`)
	x.want(x.post("/__admin/faults", `{"operationId":"RunStop","status":502}`), 201,
		`{"namespace":"default","operationId":"RunStop","status":502,"id":"fault_2"}`)
	x.want(x.get("/__admin/faults"), 200,
		`{"faults":[{"namespace":"default","operationId":"RunStop","status":502,"id":"fault_2","remaining":null,"hits":0}]}`)
	x.want(x.get("/v1/runs/example"), 404, hermesErr("Run not found: example", "run_not_found"))
}
