package faults

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Store holds the fault rules of the process (controls.md §6): shared by all
// namespaces, kept in insertion order, never persisted, not restored by
// checkout. All methods are safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	rules []*rule
	bytes int          // the sum of the rules' sizes, at most MaxTotalBytes
	n     atomic.Int32 // len(rules), read without the lock by Match's fast path
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{} }

// Add is POST /__admin/faults (controls.md §6.2). ns is the admin namespace,
// the default "namespace" of the rule; body and hasBody are the parsed request
// body. It returns the 201 response body:
//
//   - a body object with "preset" expands that preset with the other keys as
//     overrides (§6.4) → {"preset":"<name>","rules":[<stored rule>]}; a preset
//     that is not a string → 400 `fault field preset has the wrong type`; an
//     unknown name → 404 `no fault preset "<name>"`;
//   - otherwise the body must be an object with a numeric status, a numeric
//     delayMs or latencyMs, "drop": true or a string effect → else 400 `a fault
//     needs …`; then the field types are checked (400 `fault field <name> has the
//     wrong type`, see compile) → the stored rule
//     {"namespace":ns, …body, "id":<body.id when a string, else "fault_<number of rules + 1>">}.
//
// A rule whose id already exists replaces that rule in place, counters reset.
// A new rule beyond MaxRules for its namespace → 409 `too many fault rules
// (max 1000)` (hardening H6), beyond MaxTotalRules in all → 409 `too many
// fault rules in all namespaces (max 10000)`.
// This holds for the automatic id too: "fault_<number of rules + 1>" is
// computed literally (§6.2), so after a delete it can name a rule that is still
// stored, and the new rule then replaces that one (as the seed package does).
func (s *Store) Add(ns string, body runs.Value, hasBody bool) ([]byte, *runs.Error) {
	if !hasBody || body.Kind != runs.Object {
		return nil, runs.Admin(400, msgNeeds)
	}
	in := body.Obj
	if pv, ok := in.Get("preset"); ok {
		if pv.Kind != runs.String {
			return nil, wrongType("preset")
		}
		p := findPreset(pv.Str)
		if p == nil {
			return nil, runs.Admin(404, `no fault preset "`+runs.Echo(pv.Str)+`"`)
		}
		overrides := in.Clone()
		overrides.Delete("preset")
		return s.addPreset(ns, p, overrides)
	}
	if !hasNeed(in) {
		return nil, runs.Admin(400, msgNeeds)
	}
	o := &runs.Obj{}
	o.Set("namespace", runs.StringValue(ns))
	for i, k := range in.Keys {
		o.Set(k, in.Vals[i])
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := o.Get("id"); !ok || v.Kind != runs.String {
		o.Set("id", runs.StringValue("fault_"+strconv.Itoa(len(s.rules)+1)))
	}
	r, err := compile(o)
	if err != nil {
		return nil, err
	}
	if err := s.put(r); err != nil {
		return nil, err
	}
	return runs.MarshalValue(runs.ObjectValue(o)), nil
}

// ApplyPreset is POST /__admin/faults/presets/:name (controls.md §6.4): the
// optional body is the overrides object. Unknown name → 404 `no fault preset
// <name>; GET /__admin/faults/presets`; a body that is not an object ([1], "x",
// null) → 400 `preset overrides must be an object`, nothing stored; an override
// of the wrong type → 400 `fault field <name> has the wrong type`.
// It returns the 201 body {"preset":"<name>","rules":[<stored rule>]}.
func (s *Store) ApplyPreset(ns, name string, overrides runs.Value, hasBody bool) ([]byte, *runs.Error) {
	p := findPreset(name)
	if p == nil {
		return nil, runs.Admin(404, "no fault preset "+runs.Echo(name)+"; GET /__admin/faults/presets")
	}
	var o *runs.Obj
	if hasBody {
		if overrides.Kind != runs.Object {
			return nil, runs.Admin(400, "preset overrides must be an object")
		}
		o = overrides.Obj
	}
	return s.addPreset(ns, p, o)
}

func (s *Store) addPreset(ns string, p *preset, overrides *runs.Obj) ([]byte, *runs.Error) {
	o := expand(ns, p, overrides)
	r, err := compile(o)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	err = s.put(r)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	b := []byte(`{"preset":`)
	b = append(b, runs.QuoteString(p.name)...)
	b = append(b, `,"rules":[`...)
	b = runs.AppendJSON(b, runs.ObjectValue(o))
	return append(b, "]}"...), nil
}

// MaxRules is the most fault rules one namespace may hold (hardening H6):
// every vendor request walks the rules, so their number bounds its cost. Rules
// for every namespace ("*" or no namespace) count as one namespace of their own.
const MaxRules = 1000

// MaxTotalRules is the most fault rules the process holds, whatever their
// namespaces: a rule's namespace is any string, so MaxRules alone bounds
// nothing, and every vendor request walks every rule under the store's lock.
const MaxTotalRules = 10000

// MaxTotalBytes is the most bytes the stored rules may hold, as JSON, in all
// namespaces: a rule may be as large as a request body (a fault's body), so
// MaxTotalRules alone would let them hold 100 GB (STYLE rule 14).
const MaxTotalBytes = 64 << 20

var errTooManyBytes = runs.Admin(409, "too many fault rule bytes in all namespaces (max "+strconv.Itoa(MaxTotalBytes>>20)+" MiB)")

// put stores r, replacing a rule with the same id in place. A new rule for a
// namespace that already holds MaxRules rules → 409 `too many fault rules (max
// 1000)`; a new rule when the store holds MaxTotalRules → 409 `too many fault
// rules in all namespaces (max 10000)`; a rule, new or replacing, that would
// take the rules past MaxTotalBytes → 409 `too many fault rule bytes in all
// namespaces (max 64 MiB)`; nothing stored. Callers hold s.mu.
func (s *Store) put(r *rule) *runs.Error {
	same := 0
	for i, old := range s.rules {
		if old.id == r.id {
			if s.bytes-old.size+r.size > MaxTotalBytes {
				return errTooManyBytes
			}
			s.bytes += r.size - old.size
			s.rules[i] = r
			return nil
		}
		if old.anyNS == r.anyNS && old.ns == r.ns {
			same++
		}
	}
	if same >= MaxRules {
		return runs.Admin(409, "too many fault rules (max "+strconv.Itoa(MaxRules)+")")
	}
	if len(s.rules) >= MaxTotalRules {
		return runs.Admin(409, "too many fault rules in all namespaces (max "+strconv.Itoa(MaxTotalRules)+")")
	}
	if s.bytes+r.size > MaxTotalBytes {
		return errTooManyBytes
	}
	s.bytes += r.size
	s.rules = append(s.rules, r)
	s.n.Store(int32(len(s.rules)))
	return nil
}

// List is the GET /__admin/faults body (controls.md §6.3):
// {"faults":[{…rule,"remaining":<n or null>,"hits":<n>},…]}, every namespace,
// insertion order. remaining is null for a rule without a count. (A rule body
// that itself has "remaining" or "hits" keys shows the counters in their place.)
func (s *Store) List() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := []byte(`{"faults":[`)
	for i, r := range s.rules {
		if i > 0 {
			b = append(b, ',')
		}
		o := r.obj.Clone()
		if r.counted {
			o.Set("remaining", runs.IntValue(r.remaining))
		} else {
			o.Set("remaining", runs.NullValue())
		}
		o.Set("hits", runs.IntValue(r.hits))
		b = runs.AppendJSON(b, runs.ObjectValue(o))
	}
	return append(b, "]}"...)
}

// Clear is DELETE /__admin/faults without an id parameter (controls.md §6.3):
// it removes every rule of every namespace.
func (s *Store) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules, s.bytes = nil, 0
	s.n.Store(0)
}

// Delete is DELETE /__admin/faults?id=<id> (controls.md §6.3): it removes the
// rule with that id, or answers 404 `no fault <id>`. Every id is a rule id,
// the empty one included: ?id= removes a rule stored with "id":"" and
// otherwise answers 404 `no fault ` — it never removes every rule (that is
// Clear).
func (s *Store) Delete(id string) *runs.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.rules {
		if r.id == id {
			s.bytes -= r.size
			s.rules = append(s.rules[:i:i], s.rules[i+1:]...)
			s.n.Store(int32(len(s.rules)))
			return nil
		}
	}
	return runs.Admin(404, "no fault "+runs.Echo(id))
}
