package admin

import (
	"strings"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The Hermes controls (controls §11): errors in the Hermes envelope, code null
// unless stated; each commits a checkpoint on main after success.

func simulated(o *obj) []byte { return o.boolean("simulated", true).bytes() }

func (a *Admin) observe(c *call) (reply, *runs.Error) {
	rec, err := a.d.GW.Observe(c.ns, c.params["id"], c.body, c.hasBody)
	if err != nil {
		return reply{}, err
	}
	return ok200(rec)
}

func (a *Admin) events(c *call) (reply, *runs.Error) {
	id := c.params["id"]
	out, err := a.d.GW.Events(c.ns, id, c.body, c.hasBody)
	if err != nil {
		return reply{}, err
	}
	return ok200(simulated(newObj().str("run_id", id).num("emitted", float64(out.Emitted)).num("buffered", float64(out.Buffered))))
}

func (a *Admin) deliver(c *call) (reply, *runs.Error) {
	id := c.params["id"]
	n, err := a.d.GW.Deliver(c.ns, id)
	if err != nil {
		return reply{}, err
	}
	return ok200(simulated(newObj().str("run_id", id).num("delivered", float64(n))))
}

func (a *Admin) getDrain(c *call) (reply, *runs.Error) {
	return ok200(newObj().boolean("draining", a.d.GW.DrainFlag(c.ns)).bytes())
}

// onlyKey returns the value of the body's only key k.
func onlyKey(c *call, k string) (runs.Value, bool) {
	if !c.hasBody || c.body.Kind != runs.Object || c.body.Obj.Len() != 1 {
		return runs.Value{}, false
	}
	return c.body.Obj.Get(k)
}

func (a *Admin) setDrain(c *call) (reply, *runs.Error) {
	v, ok := onlyKey(c, "draining")
	if !ok || v.Kind != runs.Bool {
		return reply{}, runs.Hermes("", `drain: expected {"draining": true} or {"draining": false}`)
	}
	if err := a.d.GW.SetDraining(c.ns, v.Bool); err != nil {
		return reply{}, err
	}
	return ok200(simulated(newObj().boolean("draining", v.Bool)))
}

func (a *Admin) restart(c *call) (reply, *runs.Error) {
	v, ok := onlyKey(c, "owner")
	if !ok || v.Kind != runs.String || (v.Str != "stale" && v.Str != "alive") {
		return reply{}, runs.Hermes("", "restart: owner must be explicitly stale or alive")
	}
	out, err := a.d.GW.Restart(c.ns, v.Str == "alive")
	if err != nil {
		return reply{}, err
	}
	return ok200(simulated(newObj().str("owner", v.Str).num("retained", float64(out.Retained)).num("discarded", float64(out.Discarded))))
}

func (a *Admin) scope(c *call) (reply, *runs.Error) {
	bad := runs.Hermes("", "scope: expected nonempty synthetic profile and identity without NUL")
	if !c.hasBody || c.body.Kind != runs.Object || c.body.Obj.Len() != 2 {
		return reply{}, bad
	}
	p, okp := c.body.Obj.Get("profile")
	i, oki := c.body.Obj.Get("identity")
	valid := func(v runs.Value) bool {
		return v.Kind == runs.String && v.Str != "" && !strings.ContainsRune(v.Str, 0)
	}
	if !okp || !oki || !valid(p) || !valid(i) {
		return reply{}, bad
	}
	if err := a.d.GW.SetScope(c.ns, p.Str, i.Str); err != nil {
		return reply{}, err
	}
	return ok200(simulated(newObj().str("profile", p.Str).str("identity", i.Str)))
}

func (a *Admin) sweep(c *call) (reply, *runs.Error) {
	n, err := a.d.GW.Sweep(c.ns)
	if err != nil {
		return reply{}, err
	}
	return ok200(simulated(newObj().num("cacheRemoved", float64(n))))
}
