package admin

import (
	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/gateway"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The timeline routes (controls §8).

// TimelineGet is GET /__admin/timeline (controls §8.5).
func (a *Admin) TimelineGet(ec echo.Context, _ genadmin.TimelineGetParams) error {
	t := a.d.GW.Timeline(callOf(ec).ns)
	branches := newObj()
	for _, b := range t.Branches {
		branches.str(b.Name, b.Head)
	}
	cps := []byte{'['}
	for i, cp := range t.Checkpoints {
		if i > 0 {
			cps = append(cps, ',')
		}
		cps = append(cps, cpBody(cp).bytes()...)
	}
	cps = append(cps, ']')
	return ok200(ec, newObj().rawBytes("branches", branches.bytes()).rawBytes("checkpoints", cps).bytes())
}

// stringField reads an optional string field of the body, an object (the
// validator refuses any other body, admin.yaml): present is false when the
// field is absent or null; ok is false when it is present with another type.
// An empty string is present: a name like any other, not an absent one.
func stringField(c *call, k string) (s string, present, ok bool) {
	if !c.hasBody || c.body.Kind != runs.Object {
		return "", false, true
	}
	v, present := c.body.Obj.Get(k)
	if !present || v.Kind == runs.Null {
		return "", false, true
	}
	if v.Kind != runs.String {
		return "", true, false
	}
	return v.Str, true, true
}

// CheckpointCreate is POST /__admin/checkpoints (controls §8.3): an absent
// or null branch is main; "" is a bad name (409), not main.
func (a *Admin) CheckpointCreate(ec echo.Context, _ genadmin.CheckpointCreateParams) error {
	c := callOf(ec)
	branch, present, ok := stringField(c, "branch")
	if !ok {
		return runs.BadName("branch", 409)
	}
	if !present {
		branch = "main"
	}
	cp, err := a.d.GW.CommitCheckpoint(c.ns, branch)
	if err != nil {
		return err
	}
	return reply(ec, 201, cpBody(cp).num("records", float64(cp.Records)).bytes())
}

func cpBody(cp gateway.Checkpoint) *obj {
	return newObj().str("id", cp.ID).str("branch", cp.Branch).strOrNull("parent", cp.Parent).num("at", cp.At)
}

// BranchCreate is POST /__admin/branches/:name (controls §8.4): an absent or
// null at is main's current state; "" is an unknown checkpoint (409 `no
// checkpoint `, as checkout answers it), not main — after the branch name's
// check, in the gateway's order.
func (a *Admin) BranchCreate(ec echo.Context, name genadmin.BranchName, _ genadmin.BranchCreateParams) error {
	c := callOf(ec)
	at, present, ok := stringField(c, "at")
	if !ok {
		return runs.Admin(409, "no checkpoint "+runs.Echo(string(runs.MarshalValue(c.body.Obj.Vals[c.body.Obj.Index("at")]))))
	}
	if present && at == "" && runs.ValidName(name) {
		return runs.Admin(409, "no checkpoint ")
	}
	cp, err := a.d.GW.Branch(c.ns, name, at)
	if err != nil {
		return err
	}
	return reply(ec, 201, cpBody(cp).bytes())
}

// BranchCheckout is POST /__admin/branches/:name/checkout (controls §8.5).
func (a *Admin) BranchCheckout(ec echo.Context, name genadmin.BranchName, _ genadmin.BranchCheckoutParams) error {
	c := callOf(ec)
	bad := runs.Admin(400, `expected {"checkpoint":"cp_..."}`)
	if !c.hasBody || c.body.Kind != runs.Object {
		return bad
	}
	v, ok := c.body.Obj.Get("checkpoint")
	if !ok || v.Kind != runs.String {
		return bad
	}
	if err := a.d.GW.Checkout(c.ns, name, v.Str); err != nil {
		return err
	}
	return ok200(ec, newObj().str("status", "ok").str("branch", name).str("checkpoint", v.Str).bytes())
}

// SnapshotCreate is POST /__admin/snapshots (controls §8.7).
func (a *Admin) SnapshotCreate(ec echo.Context, _ genadmin.SnapshotCreateParams) error {
	ns := callOf(ec).ns
	id, records, err := a.d.GW.Snapshot(ns)
	if err != nil {
		return err
	}
	return reply(ec, 201, newObj().str("id", id).str("namespace", ns).num("records", float64(records)).bytes())
}

// SnapshotRestore is POST /__admin/snapshots/:id/restore (controls §8.7).
func (a *Admin) SnapshotRestore(ec echo.Context, id genadmin.SnapshotID, _ genadmin.SnapshotRestoreParams) error {
	ns := callOf(ec).ns
	if err := a.d.GW.RestoreSnapshot(ns, id); err != nil {
		return err
	}
	return ok200(ec, newObj().str("status", "ok").str("id", id).str("namespace", ns).bytes())
}

// SnapshotDelete is DELETE /__admin/snapshots/:id (controls §8.7).
func (a *Admin) SnapshotDelete(ec echo.Context, id genadmin.SnapshotID, _ genadmin.SnapshotDeleteParams) error {
	if err := a.d.GW.DeleteSnapshot(id); err != nil {
		return err
	}
	return ok200(ec, statusOK)
}
