package timeline

import (
	"fmt"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The routes (controls §8.4–§8.6) on a timeline whose main has checkpoints
// cp1 and cp2 (its head) and whose branch feat is at cp1: what each answers,
// and exactly what it asks of the host, in order.
func TestRoutes(t *testing.T) {
	full := runs.Admin(429, "too many namespaces (max 1)")
	noRoom := runs.Admin(409, "too many branches (max 1)")
	view := func(c *Checkpoint[int], err *runs.Error) (any, *runs.Error) {
		if c == nil {
			return "no view", err
		}
		return "view " + c.ID, err
	}
	branch := func(b, at string) func(*Timeline[int]) (any, *runs.Error) {
		return func(tl *Timeline[int]) (any, *runs.Error) { return tl.Branch(b, at) }
	}
	checkout := func(b, id string) func(*Timeline[int]) (any, *runs.Error) {
		return func(tl *Timeline[int]) (any, *runs.Error) { return nil, tl.Checkout(b, id) }
	}
	sel := func(b, at string, mutating bool) func(*Timeline[int]) (any, *runs.Error) {
		return func(tl *Timeline[int]) (any, *runs.Error) { return view(tl.Select(b, at, mutating)) }
	}
	info := func(id, branch, parent string, n int) Info {
		return Info{ID: id, Branch: branch, Parent: parent, At: float64(n), Records: n % 5}
	}
	cp3 := cp(3)
	for _, tc := range []struct {
		name   string
		run    func(*Timeline[int]) (any, *runs.Error)
		refuse bool // the host cannot be created
		noRoom bool // the host has no room for a new branch
		want   any
		err    *runs.Error
		log    string
		heads  map[string]string // heads after ("" = none)
	}{
		{name: "branch from main", run: branch("new", ""), want: info(cp3, "new", cp(2), 3),
			log: "create; commit main cp_00000003; restore new 3 false", heads: map[string]string{"main": "cp_00000003", "new": "cp_00000003"}},
		{name: "branch at a checkpoint", run: branch("new", cp(1)), want: info(cp(1), "new", "", 1),
			log: "create; restore new 1 false", heads: map[string]string{"new": "cp_00000001"}},
		{name: "branch already there", run: branch("feat", cp(1)), want: info(cp(1), "feat", "", 1),
			log: "create", heads: map[string]string{"feat": "cp_00000001"}},
		{name: "branch moved", run: branch("feat", cp(2)), want: info(cp(2), "feat", cp(1), 2),
			log: "create; restore feat 2 false", heads: map[string]string{"feat": "cp_00000002"}},
		{name: "branch that exists, no at", run: branch("feat", ""), want: info(cp(1), "feat", "", 1),
			log: "create", heads: map[string]string{"main": "cp_00000002", "feat": "cp_00000001"}},
		{name: "branch at an unknown checkpoint", run: branch("x", "cp_nope"), want: Info{},
			err: runs.Admin(409, "no checkpoint cp_nope")},
		{name: "branch refused", run: branch("x", ""), refuse: true, want: Info{}, err: full},
		{name: "no room for a branch", run: branch("x", ""), noRoom: true, want: Info{}, err: noRoom,
			log: "create", heads: map[string]string{"main": "cp_00000002", "x": ""}},
		{name: "no room, branch at an unknown checkpoint", run: branch("x", "cp_nope"), noRoom: true, want: Info{},
			err: runs.Admin(409, "no checkpoint cp_nope")},
		{name: "no room, branch moved", run: branch("feat", cp(2)), noRoom: true, want: info(cp(2), "feat", cp(1), 2),
			log: "create; restore feat 2 false", heads: map[string]string{"feat": "cp_00000002"}},
		{name: "no room, checkout a new branch", run: checkout("new", cp(2)), noRoom: true, err: noRoom,
			log: "create", heads: map[string]string{"main": "cp_00000002", "new": ""}},
		{name: "no room, checkout a branch", run: checkout("feat", cp(2)), noRoom: true,
			log: "create; restore feat 2 true", heads: map[string]string{"feat": "cp_00000002"}},

		{name: "checkout main", run: checkout("main", cp(1)), log: "create; restore main 1 true", heads: map[string]string{"main": "cp_00000001"}},
		{name: "checkout a new branch", run: checkout("new", cp(2)), log: "create; restore new 2 true", heads: map[string]string{"main": "cp_00000002", "new": "cp_00000002"}},
		{name: "checkout nothing", run: checkout("main", ""), err: runs.Admin(409, "no checkpoint ")},
		{name: "checkout refused", run: checkout("main", cp(1)), refuse: true, err: full, heads: map[string]string{"main": "cp_00000002"}},

		{name: "main", run: sel("main", "", false), want: "no view", heads: map[string]string{"main": "cp_00000002"}},
		{name: "main, mutating", run: sel("main", "", true), want: "no view"},
		{name: "a view of main", run: sel("main", cp(1), false), want: "view " + cp(1), heads: map[string]string{"main": "cp_00000002"}},
		{name: "a view creates nothing", run: sel("main", cp(1), false), refuse: true, want: "view " + cp(1)},
		{name: "main moved back", run: sel("main", cp(1), true), want: "no view",
			log: "create; restore main 1 true", heads: map[string]string{"main": "cp_00000001"}},
		{name: "a branch", run: sel("feat", "", false), want: "no view", log: "create", heads: map[string]string{"feat": "cp_00000001"}},
		{name: "a new branch", run: sel("new", "", false), want: "no view",
			log: "create; commit main cp_00000003; restore new 3 false", heads: map[string]string{"new": "cp_00000003"}},
		{name: "a branch moved", run: sel("feat", cp(2), false), want: "no view",
			log: "create; restore feat 2 false", heads: map[string]string{"feat": "cp_00000002"}},
		{name: "a branch already there", run: sel("feat", cp(1), true), want: "no view", log: "create"},
		{name: "an unknown checkpoint", run: sel("main", "cp_9", false), want: "no view", err: runs.Admin(409, "no checkpoint cp_9")},
		{name: "a new branch refused", run: sel("new", "", false), refuse: true, want: "no view", err: full, heads: map[string]string{"new": ""}},
		{name: "no room for a new branch", run: sel("new", "", false), noRoom: true, want: "no view", err: noRoom,
			log: "create", heads: map[string]string{"main": "cp_00000002", "new": ""}},
		{name: "no room, a branch moved", run: sel("feat", cp(2), true), noRoom: true, want: "no view",
			log: "create; restore feat 2 false", heads: map[string]string{"feat": "cp_00000002"}},
		{name: "no room, main moved back", run: sel("main", cp(1), true), noRoom: true, want: "no view",
			log: "create; restore main 1 true", heads: map[string]string{"main": "cp_00000001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl, h := newTimeline(10)
			tl.Place("feat", tl.Commit("main"))
			tl.Commit("main")
			h.took()
			if tc.refuse {
				h.refuse = full
			}
			if tc.noRoom {
				h.noRoom = noRoom
			}
			got, err := tc.run(tl)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || fmt.Sprint(err) != fmt.Sprint(tc.err) {
				t.Fatalf("got %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
			if log := h.took(); log != tc.log {
				t.Fatalf("host heard %q, want %q", log, tc.log)
			}
			for b, want := range tc.heads {
				var id string
				if c := tl.Head(b); c != nil {
					id = c.ID
				}
				if id != want {
					t.Fatalf("head of %s = %q, want %q", b, id, want)
				}
			}
			if err := tl.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
