package admin

import (
	"strings"

	"github.com/labstack/echo/v4"

	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The Hermes controls (controls §11): errors in the Hermes envelope, code null
// unless stated; each commits a checkpoint on main after success. Observe,
// events, drain, restart and scope check their own bodies (admin.yaml
// `x-hermes-body: handler`): their pinned messages come after the run lookup.

func simulated(o *obj) []byte { return o.boolean("simulated", true).bytes() }

// HermesObserve is POST /__admin/hermes/runs/:id/observe (controls §11.1).
func (a *Admin) HermesObserve(ec echo.Context, id genadmin.RunID, _ genadmin.HermesObserveParams) error {
	c := callOf(ec)
	rec, err := a.d.GW.Observe(c.ns, id, c.body, c.hasBody)
	if err != nil {
		return err
	}
	return ok200(ec, rec)
}

// HermesEvents is POST /__admin/hermes/runs/:id/events (controls §11.2).
func (a *Admin) HermesEvents(ec echo.Context, id genadmin.RunID, _ genadmin.HermesEventsParams) error {
	c := callOf(ec)
	out, err := a.d.GW.Events(c.ns, id, c.body, c.hasBody)
	if err != nil {
		return err
	}
	return ok200(ec, simulated(newObj().str("run_id", id).num("emitted", float64(out.Emitted)).num("buffered", float64(out.Buffered))))
}

// HermesDeliver is POST /__admin/hermes/runs/:id/steer/deliver (controls §11.3).
func (a *Admin) HermesDeliver(ec echo.Context, id genadmin.RunID, _ genadmin.HermesDeliverParams) error {
	n, err := a.d.GW.Deliver(callOf(ec).ns, id)
	if err != nil {
		return err
	}
	return ok200(ec, simulated(newObj().str("run_id", id).num("delivered", float64(n))))
}

// HermesDrainGet is GET /__admin/hermes/drain (controls §11.4).
func (a *Admin) HermesDrainGet(ec echo.Context, _ genadmin.HermesDrainGetParams) error {
	return ok200(ec, newObj().boolean("draining", a.d.GW.DrainFlag(callOf(ec).ns)).bytes())
}

// onlyKey returns the value of the body's only key k.
func onlyKey(c *call, k string) (runs.Value, bool) {
	if !c.hasBody || c.body.Kind != runs.Object || c.body.Obj.Len() != 1 {
		return runs.Value{}, false
	}
	return c.body.Obj.Get(k)
}

// HermesDrainSet is POST /__admin/hermes/drain (controls §11.4).
func (a *Admin) HermesDrainSet(ec echo.Context, _ genadmin.HermesDrainSetParams) error {
	c := callOf(ec)
	v, ok := onlyKey(c, "draining")
	if !ok || v.Kind != runs.Bool {
		return runs.Hermes("", `drain: expected {"draining": true} or {"draining": false}`)
	}
	if err := a.d.GW.SetDraining(c.ns, v.Bool); err != nil {
		return err
	}
	return ok200(ec, simulated(newObj().boolean("draining", v.Bool)))
}

// HermesRestart is POST /__admin/hermes/restart (controls §11.5).
func (a *Admin) HermesRestart(ec echo.Context, _ genadmin.HermesRestartParams) error {
	c := callOf(ec)
	v, ok := onlyKey(c, "owner")
	if !ok || v.Kind != runs.String || (v.Str != "stale" && v.Str != "alive") {
		return runs.Hermes("", "restart: owner must be explicitly stale or alive")
	}
	out, err := a.d.GW.Restart(c.ns, v.Str == "alive")
	if err != nil {
		return err
	}
	return ok200(ec, simulated(newObj().str("owner", v.Str).num("retained", float64(out.Retained)).num("discarded", float64(out.Discarded))))
}

// HermesScope is POST /__admin/hermes/scope (controls §11.6).
func (a *Admin) HermesScope(ec echo.Context, _ genadmin.HermesScopeParams) error {
	c := callOf(ec)
	bad := runs.Hermes("", "scope: expected nonempty synthetic profile and identity without NUL")
	if !c.hasBody || c.body.Kind != runs.Object || c.body.Obj.Len() != 2 {
		return bad
	}
	p, okp := c.body.Obj.Get("profile")
	i, oki := c.body.Obj.Get("identity")
	valid := func(v runs.Value) bool {
		return v.Kind == runs.String && v.Str != "" && !strings.ContainsRune(v.Str, 0)
	}
	if !okp || !oki || !valid(p) || !valid(i) {
		return bad
	}
	if err := a.d.GW.SetScope(c.ns, p.Str, i.Str); err != nil {
		return err
	}
	return ok200(ec, simulated(newObj().str("profile", p.Str).str("identity", i.Str)))
}

// HermesSweep is POST /__admin/hermes/sweep (controls §11.7).
func (a *Admin) HermesSweep(ec echo.Context, _ genadmin.HermesSweepParams) error {
	n, err := a.d.GW.Sweep(callOf(ec).ns)
	if err != nil {
		return err
	}
	return ok200(ec, simulated(newObj().num("cacheRemoved", float64(n))))
}
