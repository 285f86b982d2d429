package admin

import (
	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/faults"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
)

// The fault routes (controls §6). Unknown rule fields and unknown
// operationIds are refused by the validator (admin.yaml FaultRuleInput, H6);
// the store checks the rest with the pinned messages.

// FaultsList is GET /__admin/faults (controls §6.3).
func (a *Admin) FaultsList(ec echo.Context, _ genadmin.FaultsListParams) error {
	return ok200(ec, a.d.Faults.List())
}

// FaultAdd is POST /__admin/faults (controls §6.2).
func (a *Admin) FaultAdd(ec echo.Context, _ genadmin.FaultAddParams) error {
	c := callOf(ec)
	b, err := a.d.Faults.Add(c.ns, c.body, c.hasBody)
	if err != nil {
		return err
	}
	return reply(ec, 201, b)
}

// FaultsDelete is DELETE /__admin/faults (controls §6.3): without an id
// parameter every rule goes; with ?id=<id> — even an empty one — only that
// rule, or 404 `no fault <id>`.
func (a *Admin) FaultsDelete(ec echo.Context, _ genadmin.FaultsDeleteParams) error {
	v, ok := callOf(ec).query["id"]
	if !ok {
		a.d.Faults.Clear()
		return ok200(ec, statusOK)
	}
	if err := a.d.Faults.Delete(v[0]); err != nil {
		return err
	}
	return ok200(ec, statusOK)
}

// PresetsList is GET /__admin/faults/presets (controls §6.4).
func (a *Admin) PresetsList(ec echo.Context, _ genadmin.PresetsListParams) error {
	return ok200(ec, faults.Presets())
}

// PresetApply is POST /__admin/faults/presets/:name (controls §6.4).
func (a *Admin) PresetApply(ec echo.Context, name string, _ genadmin.PresetApplyParams) error {
	c := callOf(ec)
	b, err := a.d.Faults.ApplyPreset(c.ns, name, c.body, c.hasBody)
	if err != nil {
		return err
	}
	return reply(ec, 201, b)
}
