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
			Upsert: rows(cres("s", "k2", "run_1", 1, 1), cres("s", "k1", "run_2", 2, tiny), cres("t", "k1", "run_1", 5, 3))},
		Batch{Clock: &Clock{Frozen: true, FrozenMs: 1.5, OffsetMs: -2}})
	if err != nil {
		t.Fatal(err)
	}
	spaces, clock, err = s.LoadMeta(ctx)
	want := []Namespace{{"a", 7, 2, "", ""}, {"b", 3, 0, "p", "i"}}
	if err != nil || !reflect.DeepEqual(spaces, want) || *clock != (Clock{true, 1.5, -2}) {
		t.Fatalf("LoadMeta = %+v %+v %v", spaces, clock, err)
	}
	if r, ok, err := s.Reservation(ctx, "a", "s", "k1"); err != nil || !ok || !reflect.DeepEqual(r, cres("s", "k1", "run_2", 2, tiny)) {
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
	upd := func(from, to float64) (out []string) {
		rs, err := s.ReservationsUpdatedIn(ctx, "a", from, to)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, fmt.Sprint(r.Scope, "/", r.Key, "@", r.UpdatedAt))
		}
		return out
	}
	if got := upd(math.Inf(-1), math.Inf(1)); !reflect.DeepEqual(got, []string{"s/k2@1", "t/k1@3", "s/k1@" + fmt.Sprint(tiny)}) {
		t.Fatalf("ReservationsUpdatedIn (by updatedAt) = %v", got)
	}
	if got := upd(1, 3); !reflect.DeepEqual(got, []string{"s/k2@1"}) {
		t.Fatalf("ReservationsUpdatedIn [1, 3) = %v", got)
	}
	if got := upd(3, tiny); !reflect.DeepEqual(got, []string{"t/k1@3"}) {
		t.Fatalf("ReservationsUpdatedIn [3, tiny) = %v", got)
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

	// Delete, replace, rewrite owners; then reset (Clear + Meta keeps the row).
	r := cres("s", "k2", "run_7", 7, 9)
	err = s.Apply(ctx, Batch{Namespace: "a", Delete: []ReservationKey{{"s", "k1"}, {"x", "none"}}, Upsert: rows(r),
		SetOwners: &OwnerUpdate{Local: false, Alive: true}})
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Reservation(ctx, "a", "s", "k2")
	r.Local = false
	if err != nil || !ok || !reflect.DeepEqual(got, r) || !reflect.DeepEqual(keys("a"), []string{"s/k2", "t/k1"}) {
		t.Fatalf("after delete and replace: %+v %v", got, keys("a"))
	}
	// A row given to Apply stays as it was given: a later owner rewrite makes
	// new rows (Memory keeps the given row itself).
	given := cres("s", "k3", "run_8", 8, 10)
	if err := s.Apply(ctx, Batch{Namespace: "a", Upsert: []*Reservation{&given}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, Batch{Namespace: "a", SetOwners: &OwnerUpdate{Local: false, Alive: false}}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Reservation(ctx, "a", "s", "k3"); got.Local || got.Alive || !given.Local || !given.Alive {
		t.Fatalf("owner rewrite: stored %+v, given %+v", got, given)
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
}
