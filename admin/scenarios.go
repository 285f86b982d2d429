package admin

import (
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// The scenario set of a namespace (docs/scenarios.md §4): configuration, like
// fault rules — reset leaves it, DELETE clears it. Errors use the Hermes envelope.

// PUT /__admin/hermes/scenarios: the body is the file's JSON form; it replaces
// the namespace's set → {"scenarios":<count>}. Invalid → 400 naming the first
// bad field by path; nothing changes.
func (a *Admin) putScenarios(c *call) (reply, *runs.Error) {
	body := c.body
	if !c.hasBody {
		body = runs.NullValue()
	}
	set, err := scenarios.FromValue(body)
	if err != nil {
		return reply{}, err
	}
	if err := a.d.GW.SetScenarios(c.ns, set); err != nil {
		return reply{}, err
	}
	return ok200(newObj().num("scenarios", float64(set.Len())).bytes())
}

// GET /__admin/hermes/scenarios: the namespace's set, else the --scenarios
// default, else {"scenarios":[]}.
func (a *Admin) getScenarios(c *call) (reply, *runs.Error) {
	return ok200(a.d.GW.Scenarios(c.ns).JSON())
}

// DELETE /__admin/hermes/scenarios: no scenarios, not even the default, until
// the next PUT.
func (a *Admin) deleteScenarios(c *call) (reply, *runs.Error) {
	a.d.GW.DeleteScenarios(c.ns)
	return ok200(statusOK)
}
