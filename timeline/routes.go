package timeline

import "github.com/hermes-emulator/hermes-emulator/runs"

// Host owns the branches a Timeline records: in the emulator, a namespace of
// the gateway. The timeline calls it, under the owner's lock, to capture a
// branch's state and to restore one.
type Host[S any] interface {
	// Exists tells whether branch exists.
	Exists(branch string) bool
	// Capture returns the state of branch (which exists), the clock in epoch
	// ms and the number of records the state holds.
	Capture(branch string) (s S, at float64, records int)
	// Committed hears that checkpoint id was just committed from branch's
	// current state.
	Committed(branch, id string)
	// Restore makes s, the state of checkpoint id, the state of branch,
	// creating the branch when it does not exist. With checkout it also
	// restores what s holds beyond the branch (the gateway's clock and fault
	// RNG).
	Restore(branch, id string, s S, checkout bool)
	// Create makes the host exist before the timeline changes it (hardening
	// H3: a namespace is created by its first change); its error refuses the
	// change.
	Create() *runs.Error
	// Room is asked before a branch that does not exist is created (after
	// Create): its error refuses the change. Branch heads are never evicted,
	// so the host bounds how many branches it holds.
	Room() *runs.Error
}

// Place puts branch at checkpoint c (controls §8.4, §8.6): a branch that does
// not exist is created there, or when c is nil at a fresh checkpoint of main,
// when the host has room for it (Host.Room, else its error and nothing
// changes); an existing one moves there unless c is nil or its head already.
func (t *Timeline[S]) Place(branch string, c *Checkpoint[S]) *runs.Error {
	switch {
	case !t.host.Exists(branch):
		if err := t.host.Room(); err != nil {
			return err
		}
		if c == nil {
			c = t.Commit("main")
		}
		t.Move(branch, c, false)
	case c != nil && t.Head(branch) != c:
		t.Move(branch, c, false)
	}
	return nil
}

// Move points branch at c and has the host restore c's state into it; with
// checkout also what c captured beyond the branch (controls §8.5).
func (t *Timeline[S]) Move(branch string, c *Checkpoint[S], checkout bool) {
	t.host.Restore(branch, c.ID, c.State, checkout)
	t.setHead(branch, c)
}

// Branch is POST /__admin/branches/:name (controls §8.4): it creates branch at
// checkpoint at ("" = at a fresh checkpoint of main) or moves it there, and
// answers the branch's head. An unknown at is 409 "no checkpoint <at>".
func (t *Timeline[S]) Branch(branch, at string) (Info, *runs.Error) {
	c, err := t.lookup(at)
	if err == nil {
		err = t.host.Create()
	}
	if err == nil {
		err = t.Place(branch, c)
	}
	if err != nil {
		return Info{}, err
	}
	info := t.Head(branch).Info
	info.Branch = branch
	return info, nil
}

// Checkout is POST /__admin/branches/:name/checkout (controls §8.5): branch
// (created when needed) moves to checkpoint id, which restores what it
// captured beyond the branch too.
func (t *Timeline[S]) Checkout(branch, id string) *runs.Error {
	c, err := t.get(id)
	if err == nil {
		err = t.host.Create()
	}
	if err == nil && !t.host.Exists(branch) {
		err = t.host.Room()
	}
	if err == nil {
		t.Move(branch, c, true)
	}
	return err
}

// Select resolves a request's branch and x-mockingbird-at (controls §8.6).
// On main, a checkpoint is a read-only view, returned, for a request that
// does not mutate; a mutating one checks main out there first. Another branch
// is placed at the checkpoint (Place). Without at, main is used as it is.
func (t *Timeline[S]) Select(branch, at string, mutating bool) (view *Checkpoint[S], err *runs.Error) {
	c, err := t.lookup(at)
	if err != nil || branch == "main" && (c == nil || !mutating) {
		return c, err
	}
	if err := t.host.Create(); err != nil {
		return nil, err
	}
	if branch == "main" {
		t.Move(branch, c, true)
		return nil, nil
	}
	return nil, t.Place(branch, c)
}
