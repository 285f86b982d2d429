package storage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Store is the durable layer the gateway writes through: a SQLite file (DB,
// --db) or Memory (the default, which nothing outlives). Both pass the same
// contract test (contract_test.go).
type Store interface {
	// Apply performs the batches in order, atomically: all of them or none.
	Apply(ctx context.Context, bs ...Batch) error
	// LoadMeta reads the namespaces (sorted by name) and the clock (nil when
	// never saved), for start-up; reservations stay in the store until asked
	// for (Reservation, ReservationOfRun, Reservations). The reads of
	// reservations return the rows an Expiry marked too.
	LoadMeta(ctx context.Context) ([]Namespace, *Clock, error)
	// Reservation reads the reservation of (scope, key) in namespace ns.
	Reservation(ctx context.Context, ns, scope, key string) (Reservation, bool, error)
	// ReservationsOfRun reads the reservations of run id in namespace ns
	// (run ids repeat, runs-api §12.1), the greatest counter first.
	ReservationsOfRun(ctx context.Context, ns, id string) ([]Reservation, error)
	// CountReservations is the number of reservations of namespace ns.
	CountReservations(ctx context.Context, ns string) (int, error)
	// Reservations reads every reservation of namespace ns, sorted by
	// (scope, key).
	Reservations(ctx context.Context, ns string) ([]Reservation, error)
	// TerminalIn reads the key, UpdatedAt and RunN of every terminal reservation
	// of namespace ns not marked by an Expiry whose UpdatedAt is at least
	// from and less than to, sorted by (UpdatedAt, scope, key): what a
	// durable prune (runs-api §11.3) may take.
	TerminalIn(ctx context.Context, ns string, from, to float64) ([]Aged, error)
	// DropExpired deletes every reservation an Expiry marked, in every
	// namespace. Start-up calls it before reading anything, so a mark never
	// outlives the process that made it.
	DropExpired(ctx context.Context) error
	// Path is the file ("" for Memory); Existed tells a real restart.
	Path() string
	Existed() bool
	Close() error
}

var (
	_ Store = (*DB)(nil)
	_ Store = (*Memory)(nil)
)

// Memory is the in-memory Store: plain maps under a mutex.
type Memory struct {
	mu     sync.Mutex
	spaces map[string]*memSpace
	clock  *Clock
}

type memSpace struct {
	meta    Namespace
	res     map[ReservationKey]*Reservation // the rows as Apply was given them (never changed: shared with the caller)
	expired map[ReservationKey]bool         // the rows an Expiry marked
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{spaces: map[string]*memSpace{}} }

// Apply implements Store. Every batch is checked (as DB's constraints would)
// before anything changes, so a failing call changes nothing.
func (m *Memory) Apply(_ context.Context, bs ...Batch) error {
	for i := range bs {
		if err := bs[i].check(); err != nil {
			return err
		}
		if err := bs[i].constraints(); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range bs {
		m.apply(&bs[i])
	}
	return nil
}

func (m *Memory) apply(b *Batch) {
	if b.Clear {
		delete(m.spaces, b.Namespace)
	}
	sp := m.spaces[b.Namespace]
	if b.Namespace != "" && sp == nil && (b.Meta != nil || len(b.Upsert) > 0) {
		sp = &memSpace{meta: Namespace{Name: b.Namespace}, res: map[ReservationKey]*Reservation{}, expired: map[ReservationKey]bool{}}
		m.spaces[b.Namespace] = sp
	}
	if b.Meta != nil {
		sp.meta = *b.Meta
		sp.meta.Name = b.Namespace
	}
	for _, k := range b.Delete {
		if sp != nil {
			delete(sp.res, k)
			delete(sp.expired, k)
		}
	}
	if e := b.Expire; e != nil && sp != nil {
		for k, r := range sp.res {
			if r.Terminal && e.Now-r.UpdatedAt > e.Age {
				sp.expired[k] = true
			}
		}
	}
	for _, r := range b.Upsert {
		k := ReservationKey{r.Scope, r.Key}
		sp.res[k] = r // shared: callers never change a row they gave
		delete(sp.expired, k)
	}
	if b.Clock != nil {
		c := *b.Clock
		m.clock = &c
	}
}

// constraints are the schema's CHECKs (migrations/), for Memory.
func (b *Batch) constraints() error {
	bad := func(what string) error { return fmt.Errorf("storage: apply: %w: %s", ErrConstraint, what) }
	if m := b.Meta; m != nil {
		if m.RunCounter < 0 || m.ApprovalCounter < 0 || (m.ScopeProfile == "") != (m.ScopeIdentity == "") {
			return bad("namespace row")
		}
	}
	for _, r := range b.Upsert {
		if r.Scope == "" || r.Key == "" || r.Fingerprint == "" || r.RunID == "" || r.OwnerScope == "" ||
			len(r.Record) == 0 || r.RunN < 0 {
			return bad(fmt.Sprintf("reservation (%q, %q)", r.Scope, r.Key))
		}
	}
	return nil
}

// LoadMeta implements Store.
func (m *Memory) LoadMeta(context.Context) ([]Namespace, *Clock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Namespace
	for _, sp := range m.spaces {
		out = append(out, sp.meta)
	}
	slices.SortFunc(out, func(a, b Namespace) int { return strings.Compare(a.Name, b.Name) })
	var c *Clock
	if m.clock != nil {
		cc := *m.clock
		c = &cc
	}
	return out, c, nil
}

// Reservation implements Store.
func (m *Memory) Reservation(_ context.Context, ns, scope, key string) (Reservation, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sp := m.spaces[ns]; sp != nil {
		k := ReservationKey{scope, key}
		if r, ok := sp.res[k]; ok {
			return r.of(ns), true, nil
		}
	}
	return Reservation{}, false, nil
}

// ReservationsOfRun implements Store (a scan: Memory serves tests and the
// contract; the gateway keeps its own index).
func (m *Memory) ReservationsOfRun(_ context.Context, ns, id string) ([]Reservation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Reservation
	if sp := m.spaces[ns]; sp != nil {
		for _, r := range sp.res {
			if r.RunID == id {
				out = append(out, r.of(ns))
			}
		}
	}
	slices.SortFunc(out, func(a, b Reservation) int { return cmp.Compare(b.RunN, a.RunN) })
	return out, nil
}

// CountReservations implements Store.
func (m *Memory) CountReservations(_ context.Context, ns string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sp := m.spaces[ns]; sp != nil {
		return len(sp.res), nil
	}
	return 0, nil
}

// Reservations implements Store.
func (m *Memory) Reservations(_ context.Context, ns string) ([]Reservation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Reservation
	if sp := m.spaces[ns]; sp != nil {
		for _, r := range sp.res {
			out = append(out, r.of(ns))
		}
	}
	slices.SortFunc(out, func(a, b Reservation) int {
		if c := strings.Compare(a.Scope, b.Scope); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out, nil
}

// TerminalIn implements Store.
func (m *Memory) TerminalIn(_ context.Context, ns string, from, to float64) ([]Aged, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Aged
	if sp := m.spaces[ns]; sp != nil {
		for k, r := range sp.res {
			if r.Terminal && !sp.expired[k] && r.UpdatedAt >= from && r.UpdatedAt < to {
				out = append(out, Aged{k, r.UpdatedAt, r.RunN})
			}
		}
	}
	slices.SortFunc(out, func(a, b Aged) int {
		return cmp.Or(cmp.Compare(a.UpdatedAt, b.UpdatedAt), strings.Compare(a.Key.Scope, b.Key.Scope), strings.Compare(a.Key.Key, b.Key.Key))
	})
	return out, nil
}

// DropExpired implements Store.
func (m *Memory) DropExpired(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, sp := range m.spaces {
		for k := range sp.expired {
			delete(sp.res, k)
		}
		clear(sp.expired)
	}
	return nil
}

// of is r as a read answers it: a copy, in namespace ns.
func (r *Reservation) of(ns string) Reservation {
	c := *r
	c.Namespace = ns
	return c
}

// Path implements Store: always "".
func (m *Memory) Path() string { return "" }

// Existed implements Store: always false.
func (m *Memory) Existed() bool { return false }

// Close implements Store.
func (m *Memory) Close() error { return nil }
