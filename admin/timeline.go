package admin

import (
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The timeline routes (controls §8).

func (a *Admin) timeline(c *call) (reply, *runs.Error) {
	t := a.d.GW.Timeline(c.ns)
	branches := newObj()
	for _, b := range t.Branches {
		branches.str(b.Name, b.Head)
	}
	cps := []byte{'['}
	for i, cp := range t.Checkpoints {
		if i > 0 {
			cps = append(cps, ',')
		}
		cps = append(cps, newObj().str("id", cp.ID).str("branch", cp.Branch).strOrNull("parent", cp.Parent).num("at", cp.At).bytes()...)
	}
	cps = append(cps, ']')
	return ok200(newObj().rawBytes("branches", branches.bytes()).rawBytes("checkpoints", cps).bytes())
}

// stringField reads an optional string field of the body; ok is false when the
// field is present with another type.
func stringField(c *call, k string) (string, bool) {
	if !c.hasBody || c.body.Kind != runs.Object {
		return "", true
	}
	v, present := c.body.Obj.Get(k)
	if !present || v.Kind == runs.Null {
		return "", true
	}
	if v.Kind != runs.String {
		return "", false
	}
	return v.Str, true
}

func (a *Admin) checkpoint(c *call) (reply, *runs.Error) {
	branch, ok := stringField(c, "branch")
	if !ok {
		return reply{}, runs.Admin(409, "branch must match /^[A-Za-z0-9_.-]{1,64}$/")
	}
	if branch == "" {
		branch = "main"
	}
	cp, err := a.d.GW.CommitCheckpoint(c.ns, branch)
	if err != nil {
		return reply{}, err
	}
	return reply{201, cpBody(cp).num("records", float64(cp.Records)).bytes()}, nil
}

func cpBody(cp gateway.Checkpoint) *obj {
	return newObj().str("id", cp.ID).str("branch", cp.Branch).strOrNull("parent", cp.Parent).num("at", cp.At)
}

func (a *Admin) branch(c *call) (reply, *runs.Error) {
	at, ok := stringField(c, "at")
	if !ok {
		return reply{}, runs.Admin(409, "no checkpoint "+string(runs.MarshalValue(c.body.Obj.Vals[c.body.Obj.Index("at")])))
	}
	cp, err := a.d.GW.Branch(c.ns, c.params["name"], at)
	if err != nil {
		return reply{}, err
	}
	return reply{201, cpBody(cp).bytes()}, nil
}

func (a *Admin) checkout(c *call) (reply, *runs.Error) {
	bad := runs.Admin(400, `expected {"checkpoint":"cp_..."}`)
	if !c.hasBody || c.body.Kind != runs.Object {
		return reply{}, bad
	}
	v, ok := c.body.Obj.Get("checkpoint")
	if !ok || v.Kind != runs.String {
		return reply{}, bad
	}
	name := c.params["name"]
	if err := a.d.GW.Checkout(c.ns, name, v.Str); err != nil {
		return reply{}, err
	}
	return ok200(newObj().str("status", "ok").str("branch", name).str("checkpoint", v.Str).bytes())
}

func (a *Admin) snapshot(c *call) (reply, *runs.Error) {
	id, records, err := a.d.GW.Snapshot(c.ns)
	if err != nil {
		return reply{}, err
	}
	return reply{201, newObj().str("id", id).str("namespace", c.ns).num("records", float64(records)).bytes()}, nil
}

func (a *Admin) restoreSnapshot(c *call) (reply, *runs.Error) {
	id := c.params["id"]
	if err := a.d.GW.RestoreSnapshot(c.ns, id); err != nil {
		return reply{}, err
	}
	return ok200(newObj().str("status", "ok").str("id", id).str("namespace", c.ns).bytes())
}

func (a *Admin) deleteSnapshot(c *call) (reply, *runs.Error) {
	if err := a.d.GW.DeleteSnapshot(c.params["id"]); err != nil {
		return reply{}, err
	}
	return ok200(statusOK)
}
