package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
)

// The Store contract, run against both implementations: Memory (the default)
// and DB (SQLite, --db).
func TestStoreContract(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemory() },
		"sqlite": func(t *testing.T) Store {
			db, err := Open(filepath.Join(t.TempDir(), "c.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	} {
		t.Run(name, func(t *testing.T) { storeContract(t, open(t)) })
	}
}

func cres(scope, key, id string, n int64, at float64) Reservation {
	return Reservation{Namespace: "a", Scope: scope, Key: key, Fingerprint: "fp", RunID: id, RunN: n, OwnerScope: scope,
		Keyed: true, Local: true, Alive: true, Record: []byte(`{"run_id":"` + id + `"}`), UpdatedAt: at}
}

// terminal is r with Terminal set.
func terminal(r Reservation) Reservation {
	r.Terminal = true
	return r
}

func storeContract(t *testing.T, s Store) {
	ctx := context.Background()
	spaces, clock, err := s.LoadMeta(ctx)
	if err != nil || len(spaces) != 0 || clock != nil {
		t.Fatalf("empty: %v %v %v", spaces, clock, err)
	}
	tiny := math.Nextafter(1700000000.1, 2e9) // floats come back exactly
	err = s.Apply(ctx,
		Batch{Namespace: "b", Meta: &Namespace{RunCounter: 3, ScopeProfile: "p", ScopeIdentity: "i"}},
		Batch{Namespace: "a", Meta: &Namespace{Name: "a", RunCounter: 7, ApprovalCounter: 2},
			Upsert: rows(terminal(cres("s", "k2", "run_1", 1, 1)), terminal(cres("s", "k1", "run_2", 2, tiny)), cres("t", "k1", "run_1", 5, 3))},
		Batch{Clock: &Clock{Frozen: true, FrozenMs: 1.5, OffsetMs: -2}})
	if err != nil {
		t.Fatal(err)
	}
	spaces, clock, err = s.LoadMeta(ctx)
	want := []Namespace{{"a", 7, 2, "", ""}, {"b", 3, 0, "p", "i"}}
	if err != nil || !reflect.DeepEqual(spaces, want) || *clock != (Clock{true, 1.5, -2}) {
		t.Fatalf("LoadMeta = %+v %+v %v", spaces, clock, err)
	}
	if r, ok, err := s.Reservation(ctx, "a", "s", "k1"); err != nil || !ok || !reflect.DeepEqual(r, terminal(cres("s", "k1", "run_2", 2, tiny))) {
		t.Fatalf("Reservation = %+v %v %v", r, ok, err)
	}
	if _, ok, err := s.Reservation(ctx, "b", "s", "k1"); err != nil || ok {
		t.Fatalf("another namespace's key: %v %v", ok, err)
	}
	if rs, err := s.ReservationsOfRun(ctx, "a", "run_1"); err != nil || len(rs) != 2 || rs[0].Key != "k1" || rs[0].RunN != 5 || rs[1].RunN != 1 {
		t.Fatalf("ReservationsOfRun (the greater counter first) = %+v %v", rs, err)
	}
	if rs, err := s.ReservationsOfRun(ctx, "a", "run_9"); err != nil || len(rs) != 0 {
		t.Fatalf("ReservationsOfRun of nothing: %v %v", rs, err)
	}
	upd := func(ns string, from, to float64) (out []string) {
		rs, err := s.TerminalIn(ctx, ns, from, to)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, fmt.Sprint(r.Key.Scope, "/", r.Key.Key, "@", r.UpdatedAt, "#", r.RunN))
		}
		return out
	}
	// The unfinished t/k1 is never one.
	if got := upd("a", math.Inf(-1), math.Inf(1)); !reflect.DeepEqual(got, []string{"s/k2@1#1", "s/k1@" + fmt.Sprint(tiny) + "#2"}) {
		t.Fatalf("TerminalIn (by updatedAt) = %v", got)
	}
	if got := upd("a", 1, tiny); !reflect.DeepEqual(got, []string{"s/k2@1#1"}) {
		t.Fatalf("TerminalIn [1, tiny) = %v", got)
	}
	if got := upd("a", math.Nextafter(1, 2), tiny); got != nil {
		t.Fatalf("TerminalIn [1⁺, tiny) = %v", got)
	}
	if n, err := s.CountReservations(ctx, "a"); err != nil || n != 3 {
		t.Fatalf("CountReservations = %d %v", n, err)
	}
	if n, err := s.CountReservations(ctx, "zz"); err != nil || n != 0 {
		t.Fatalf("CountReservations of nothing = %d %v", n, err)
	}
	keys := func(ns string) (out []string) {
		rs, err := s.Reservations(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, r.Scope+"/"+r.Key)
		}
		return out
	}
	if got := keys("a"); !reflect.DeepEqual(got, []string{"s/k1", "s/k2", "t/k1"}) {
		t.Fatalf("Reservations = %v", got)
	}

	// A failing call changes nothing, whichever batch fails.
	bad := cres("s", "", "run_3", 3, 1)
	err = s.Apply(ctx, Batch{Namespace: "a", Delete: []ReservationKey{{"s", "k1"}}}, Batch{Namespace: "a", Upsert: rows(bad)})
	if !errors.Is(err, ErrConstraint) {
		t.Fatalf("empty key: %v", err)
	}
	if err := s.Apply(ctx, Batch{Upsert: rows(cres("s", "k", "r", 1, 1))}); !errors.Is(err, ErrBatch) {
		t.Fatalf("no namespace: %v", err)
	}
	if got := keys("a"); len(got) != 3 {
		t.Fatalf("after failures: %v", got)
	}

	// Delete and replace; then reset (Clear + Meta keeps the row).
	r := cres("s", "k2", "run_7", 7, 9)
	err = s.Apply(ctx, Batch{Namespace: "a", Delete: []ReservationKey{{"s", "k1"}, {"x", "none"}}, Upsert: rows(r)})
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Reservation(ctx, "a", "s", "k2")
	if err != nil || !ok || !reflect.DeepEqual(got, r) || !reflect.DeepEqual(keys("a"), []string{"s/k2", "t/k1"}) {
		t.Fatalf("after delete and replace: %+v %v", got, keys("a"))
	}
	if err := s.Apply(ctx, Batch{Namespace: "a", Clear: true, Meta: &Namespace{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	spaces, _, _ = s.LoadMeta(ctx)
	if len(keys("a")) != 0 || len(spaces) != 2 || spaces[0] != (Namespace{Name: "a"}) {
		t.Fatalf("after reset: %v %+v", keys("a"), spaces)
	}
	// An upsert into a namespace without its row creates the row.
	row := cres("s", "k", "run_1", 1, 1)
	row.Namespace = "" // the batch's
	if err := s.Apply(ctx, Batch{Namespace: "c", Upsert: rows(row)}); err != nil {
		t.Fatal(err)
	}
	if spaces, _, _ = s.LoadMeta(ctx); len(spaces) != 3 || spaces[2] != (Namespace{Name: "c"}) {
		t.Fatalf("ensured row: %+v", spaces)
	}
	expiryContract(t, s, upd)
}

// An Expiry marks exactly the terminal rows of its namespace whose Now −
// UpdatedAt > Age; reads return them until DropExpired deletes them, and an
// upsert of the key — in the same batch too, after the Expiry — unmarks it.
func expiryContract(t *testing.T, s Store, terminalIn func(ns string, from, to float64) []string) {
	ctx := context.Background()
	now := 86500.5
	old, edge, young := terminal(cres("s", "old", "run_1", 1, 100)), terminal(cres("s", "edge", "run_2", 2, 100.5)), terminal(cres("s", "young", "run_3", 3, 200))
	queued, other := cres("s", "queued", "run_4", 4, 0), terminal(cres("s", "old", "run_1", 1, 0))
	for _, r := range []*Reservation{&old, &edge, &young, &queued, &other} {
		r.Namespace = "" // the batch's
	}
	if err := s.Apply(ctx, Batch{Namespace: "e", Upsert: rows(old, edge, young, queued)}, Batch{Namespace: "f", Upsert: rows(other)}); err != nil {
		t.Fatal(err)
	}
	expire := func(bs ...Batch) {
		t.Helper()
		if err := s.Apply(ctx, bs...); err != nil {
			t.Fatal(err)
		}
	}
	expire(Batch{Namespace: "e", Expire: &Expiry{Now: now, Age: 86400}})
	all := []string{"s/edge@100.5#2", "s/young@200#3"}
	if got := terminalIn("e", math.Inf(-1), math.Inf(1)); !reflect.DeepEqual(got, all) {
		t.Fatalf("TerminalIn after the expiry = %v, want %v", got, all)
	}
	if got := terminalIn("f", math.Inf(-1), math.Inf(1)); !reflect.DeepEqual(got, []string{"s/old@0#1"}) {
		t.Fatalf("another namespace after the expiry: %v", got)
	}
	if r, ok, err := s.Reservation(ctx, "e", "s", "old"); err != nil || !ok || r.Key != "old" {
		t.Fatalf("a marked row is read as before: %+v %v %v", r, ok, err)
	}
	if rs, err := s.Reservations(ctx, "e"); err != nil || len(rs) != 4 {
		t.Fatalf("Reservations after the expiry: %d rows, %v", len(rs), err)
	}
	// Reserved again: unmarked, even when the batch expires first.
	expire(Batch{Namespace: "e", Upsert: rows(old)})
	if got := terminalIn("e", math.Inf(-1), 150); !reflect.DeepEqual(got, []string{"s/old@100#1", "s/edge@100.5#2"}) {
		t.Fatalf("TerminalIn after the upsert = %v", got)
	}
	expire(Batch{Namespace: "e", Expire: &Expiry{Now: now, Age: 86400}, Upsert: rows(old)})
	if got := terminalIn("e", math.Inf(-1), 150); !reflect.DeepEqual(got, []string{"s/old@100#1", "s/edge@100.5#2"}) {
		t.Fatalf("TerminalIn after an expiry and an upsert in one batch = %v", got)
	}
	expire(Batch{Namespace: "e", Expire: &Expiry{Now: now + 1, Age: 86400}})
	if err := s.DropExpired(ctx); err != nil {
		t.Fatal(err)
	}
	keys := func(ns string) (out []string) {
		rs, err := s.Reservations(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, r.Key)
		}
		return out
	}
	if got := keys("e"); !reflect.DeepEqual(got, []string{"queued", "young"}) {
		t.Fatalf("after DropExpired: %v", got)
	}
	if got := keys("f"); !reflect.DeepEqual(got, []string{"old"}) {
		t.Fatalf("another namespace after DropExpired: %v", got)
	}
	if err := s.Apply(ctx, Batch{Expire: &Expiry{Now: now, Age: 1}}); !errors.Is(err, ErrBatch) {
		t.Fatalf("an expiry without namespace: %v", err)
	}
}
