package admin

import (
	"github.com/labstack/echo/v4"

	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// The scenario set of a namespace (scenarios §4): configuration, like
// fault rules — reset leaves it, DELETE clears it. The PUT body is checked by
// the scenarios package (admin.yaml `x-hermes-body: handler`), so its errors
// are the Hermes envelope naming the first bad field by path.

// HermesScenariosPut is PUT /__admin/hermes/scenarios: the body is a
// scenario file's JSON form; it replaces the namespace's set →
// {"scenarios":<count>}. Invalid → 400; nothing changes.
func (a *Admin) HermesScenariosPut(ec echo.Context, _ genadmin.HermesScenariosPutParams) error {
	c := callOf(ec)
	body := c.body
	if !c.hasBody {
		body = runs.NullValue()
	}
	set, err := scenarios.FromValue(body)
	if err != nil {
		return err
	}
	if err := a.d.GW.SetScenarios(c.ns, set); err != nil {
		return err
	}
	return ok200(ec, newObj().num("scenarios", float64(set.Len())).bytes())
}

// HermesScenariosGet is GET /__admin/hermes/scenarios: the namespace's set,
// else the --scenarios default, else {"scenarios":[]}.
func (a *Admin) HermesScenariosGet(ec echo.Context, _ genadmin.HermesScenariosGetParams) error {
	return ok200(ec, a.d.GW.Scenarios(callOf(ec).ns).JSON())
}

// HermesScenariosDelete is DELETE /__admin/hermes/scenarios: no scenarios,
// not even the default, until the next PUT.
func (a *Admin) HermesScenariosDelete(ec echo.Context, _ genadmin.HermesScenariosDeleteParams) error {
	if err := a.d.GW.DeleteScenarios(callOf(ec).ns); err != nil {
		return err
	}
	return ok200(ec, statusOK)
}

// scenarioJSON renders a run view's scenario (admin.yaml RunView.scenario):
// {"name","step","due"} with due null while the scenario waits for an
// approval answer; null when no scenario drives the run.
func scenarioJSON(p *scenarios.Position) string {
	if p == nil {
		return "null"
	}
	o := newObj().str("name", p.Name).str("step", p.Step)
	if p.Waiting {
		o = o.raw("due", "null")
	} else {
		o = o.num("due", p.Due)
	}
	return string(o.bytes())
}
