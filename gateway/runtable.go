package gateway

import (
	"math"
	"slices"
	"sort"

	"github.com/benbjohnson/immutable"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The cache layer of one State, kept small: under load nearly every cached run
// is one just admitted — queued, its session the run id, its model the default,
// owned here — and such a run is fully given by its storage namespace, its
// counter n, its creation time and its owner scope. It is kept as a slot in an
// append-only log — 4 bytes of time, the (namespace, scope) class stored once
// per stretch of slots sharing it — instead of a rendered record in a map; its
// record is rendered when read. Every other run (changed, hydrated,
// submitted with a session or model) is a *Cached in a persistent map; a
// changed slot run's record there shadows its slot, and a removed one's slot
// is marked dead in a persistent bitset of the version (1 bit a slot). What a
// removed slot run leaves behind is its slot and its catalog entry (~8 bytes).
//
// Copying a runTable is still an O(1) snapshot: the log is append-only and a
// version sees only its first n slots; appending to a version that is not at
// the log's end (after a checkout, or on a second branch) first forks the log,
// sharing its full chunks.

// slotChunk is the number of slots in one chunk of a slot log.
const slotChunk = 4096

// slot i of a log is the run with counter n = base+i+1: every admission
// appends one, an empty one (ns 0) when the run is kept as a *Cached instead;
// at is kept for those too (the creation time of the run's transport).
type slot struct {
	at    float64 // created_at = updated_at
	ns    uint32  // catalog index of the storage namespace of the run id; 0 = empty
	scope uint32  // catalog index of the owner scope; slotKeyed set when keyed
}

const slotKeyed = 1 << 31

// A slot log stores the times of its slots and their (ns, scope) in runs:
// consecutive admissions nearly always share them.
type slotLog struct {
	times   []*timeChunk
	classes []classRun // by from, ascending
	n       int
	base    int64
	nss     []uint32 // the storage namespaces of its slots (usually one)
}

type classRun struct {
	from      int // first slot index of the run
	ns, scope uint32
}

// timeChunk holds slotChunk times exactly. Admission times close together are
// close binary64 values, so it keeps each as a 32-bit difference of its bit
// pattern from the first one (4 bytes a time); a time too far from the first
// turns the chunk into plain float64s.
type timeChunk struct {
	first uint64  // math.Float64bits of the first time
	delta []int32 // bits(time) - first, while wide is nil
	wide  []float64
}

func (c *timeChunk) get(i int) float64 {
	if c.wide != nil {
		return c.wide[i]
	}
	return math.Float64frombits(c.first + uint64(int64(c.delta[i])))
}

func (c *timeChunk) push(at float64) {
	if c.wide == nil {
		if len(c.delta) == 0 {
			c.first = math.Float64bits(at)
		}
		d := int64(math.Float64bits(at) - c.first)
		if d == int64(int32(d)) {
			c.delta = append(c.delta, int32(d))
			return
		}
		wide := make([]float64, len(c.delta), slotChunk)
		for i := range c.delta {
			wide[i] = c.get(i)
		}
		c.wide, c.delta = wide, nil
	}
	c.wide = append(c.wide, at)
}

// prefix is a new chunk holding the first r times of c.
func (c *timeChunk) prefix(r int) *timeChunk {
	nc := &timeChunk{first: c.first}
	if c.wide != nil {
		nc.wide = append(make([]float64, 0, slotChunk), c.wide[:r]...)
	} else {
		nc.delta = append(make([]int32, 0, slotChunk), c.delta[:r]...)
	}
	return nc
}

func (l *slotLog) at(i int) slot {
	k := len(l.classes) - 1
	if l.classes[k].from > i {
		k = sort.Search(len(l.classes), func(k int) bool { return l.classes[k].from > i }) - 1
	}
	c := l.classes[k]
	return slot{at: l.times[i/slotChunk].get(i % slotChunk), ns: c.ns, scope: c.scope}
}

func (l *slotLog) push(s slot) {
	if s.ns != 0 && !slices.Contains(l.nss, s.ns) {
		l.nss = append(l.nss, s.ns)
	}
	if k := len(l.classes) - 1; k < 0 || l.classes[k].ns != s.ns || l.classes[k].scope != s.scope {
		l.classes = append(l.classes, classRun{l.n, s.ns, s.scope})
	}
	if l.n%slotChunk == 0 {
		l.times = append(l.times, &timeChunk{delta: make([]int32, 0, slotChunk)})
	}
	l.times[len(l.times)-1].push(s.at)
	l.n++
}

// fork is a new log holding l's first n slots; full chunks are shared (no log
// writes into a full chunk again).
func (l *slotLog) fork(n int) *slotLog {
	if l == nil || n == 0 {
		return &slotLog{}
	}
	nl := &slotLog{n: n, base: l.base, nss: slices.Clone(l.nss)}
	k := sort.Search(len(l.classes), func(k int) bool { return l.classes[k].from >= n })
	nl.classes = slices.Clone(l.classes[:k])
	full := n / slotChunk
	nl.times = append(make([]*timeChunk, 0, full+1), l.times[:full]...)
	if r := n % slotChunk; r > 0 {
		nl.times = append(nl.times, l.times[full].prefix(r))
	}
	return nl
}

type runTable struct {
	log   *slotLog
	n     int                             // slots of log this version sees
	dead  deadSet                         // slots removed in this version
	other *immutable.Map[string, *Cached] // runs not in slots, and changed slot runs (they shadow the slot)
	len   int                             // runs present
}

// deadSet is a persistent bitset: bit i set means entry (or slot) i of a
// shared log was removed in this version. The zero value is empty.
type deadSet struct{ l *immutable.List[uint64] }

func (d deadSet) has(i int) bool {
	return d.l != nil && i/64 < d.l.Len() && d.l.Get(i/64)>>(i%64)&1 != 0
}

func (d *deadSet) add(i int) {
	if d.l == nil {
		d.l = immutable.NewList[uint64]()
	}
	for d.l.Len() <= i/64 {
		d.l = d.l.Append(0)
	}
	d.l = d.l.Set(i/64, d.l.Get(i/64)|1<<(i%64))
}

func newRunTable() runTable {
	return runTable{other: immutable.NewMap[string, *Cached](nil)}
}

// catalog interns the storage namespaces and scopes of slots and maps run ids
// back to their counter n. A run id is "run_" + a token of a 32-bit hash h of
// (storage namespace, n), and runs.RunHash recovers h from the id; each
// namespace's index then maps h to the counters that give it. Run ids are a
// pure function of both, so the index is shared by every version of every
// branch. One per Gateway; callers hold g.mu.
type catalog struct {
	nsIdx   map[string]uint32
	nsNames []string
	index   []nsIndex // by namespace index
	scIdx   map[string]uint32
	scNames []string
	fpIdx   map[string]uint32 // fingerprints of plain reservations
	fpNames []string
}

const maxIdx = 1 << 22 // catalog indexes

// newCatalog returns an empty catalog; index 0 of each list is reserved.
func newCatalog() *catalog {
	return &catalog{nsIdx: map[string]uint32{}, nsNames: []string{""}, index: []nsIndex{{}},
		scIdx: map[string]uint32{}, scNames: []string{""}, fpIdx: map[string]uint32{}, fpNames: []string{""}}
}

func intern(idx map[string]uint32, names *[]string, s string) (uint32, bool) {
	if i, ok := idx[s]; ok {
		return i, true
	}
	if len(*names) >= maxIdx {
		return 0, false
	}
	i := uint32(len(*names))
	idx[s] = i
	*names = append(*names, s)
	return i, true
}

// nsIndex is an open-addressing hash set of the run counters n admitted in one
// storage namespace, placed by the hash of their run id: 4 bytes a slot.
type nsIndex struct {
	p     uint32   // runs.RunNSHash of the namespace
	table []uint32 // n, 0 = empty
	count int
}

// The open-addressing tables (nsIndex, resLog.index) probe linearly, stay
// under 7/8 full and grow by half: a table of any size, so the step from one
// size to the next costs a half of it rather than all of it.

// bucket is the first slot of hash h in a table of size slots: the hash is
// mixed, then scaled to the size (multiply-shift).
func bucket(h uint32, size int) int {
	return int(uint64(uint32(uint64(h)*0x9E3779B97F4A7C15>>32)) * uint64(size) >> 32)
}

// probe is the slot after i in a table of size slots.
func probe(i, size int) int {
	if i++; i == size {
		return 0
	}
	return i
}

// grown is the size of a table grown from size slots.
func grown(size int) int { return max(64, size+size/2) }

// full reports whether a table of size slots holding count must grow before
// taking one more.
func full(count, size int) bool { return 8*(count+1) > 7*size }

func (x *nsIndex) add(n uint32) {
	if full(x.count, len(x.table)) {
		old := x.table
		x.table = make([]uint32, grown(len(old)))
		x.count = 0
		for _, m := range old {
			if m != 0 {
				x.place(m, runs.RunHashOf(x.p, int64(m)))
			}
		}
	}
	x.place(n, runs.RunHashOf(x.p, int64(n)))
}

func (x *nsIndex) place(n, h uint32) {
	size := len(x.table)
	for i := bucket(h, size); ; i = probe(i, size) {
		switch x.table[i] {
		case n:
			return
		case 0:
			x.table[i] = n
			x.count++
			return
		}
	}
}

// each calls f with every n whose run id hash is h, until f returns true.
func (x *nsIndex) each(h uint32, f func(n int64) bool) bool {
	if len(x.table) == 0 {
		return false
	}
	size := len(x.table)
	for i := bucket(h, size); x.table[i] != 0; i = probe(i, size) {
		if n := int64(x.table[i]); runs.RunHashOf(x.p, n) == h && f(n) {
			return true
		}
	}
	return false
}

// admitted records that storage namespace ns admitted its n-th run and
// returns ns's catalog index; false when the catalog cannot hold it (n beyond
// 32 bits, or too many namespaces), and the run and its transport are then kept
// without the catalog.
func (c *catalog) admitted(ns string, n int64) (uint32, bool) {
	if n < 1 || n > 1<<32-1 {
		return 0, false
	}
	nsI, ok := intern(c.nsIdx, &c.nsNames, ns)
	if !ok {
		return 0, false
	}
	if int(nsI) == len(c.index) {
		c.index = append(c.index, nsIndex{p: runs.RunNSHash(ns)})
	}
	c.index[nsI].add(uint32(n))
	return nsI, true
}

// counters calls f with each storage namespace of nss and each counter n
// admitted there whose run id may be id (the same 32-bit hash), until f
// returns true; it reports whether f did.
func (c *catalog) counters(id string, nss []uint32, f func(ns uint32, n int64) bool) bool {
	h, ok := runs.RunHash(id)
	if !ok {
		return false
	}
	for _, ns := range nss {
		if c.index[ns].each(h, func(n int64) bool { return f(ns, n) }) {
			return true
		}
	}
	return false
}

// find returns the slot index of run id among the first n slots of t's log
// that are not dead, if one of them holds it.
func (t *runTable) find(c *catalog, id string) (int, bool) {
	l, n := t.log, t.n
	if l == nil || n == 0 {
		return 0, false
	}
	found := -1
	c.counters(id, l.nss, func(ns uint32, rn int64) bool {
		i := rn - 1 - l.base
		if i >= 0 && i < int64(n) && l.at(int(i)).ns == ns && !t.dead.has(int(i)) {
			found = int(i)
			return true
		}
		return false
	})
	return found, found >= 0
}

// cached renders slot s of run id as a Cached.
func (c *catalog) cached(id string, s slot) *Cached {
	return &Cached{
		Record: runs.AppendPlainRecord(make([]byte, 0, 240), id, s.at, false), Status: runs.Queued, UpdatedAt: s.at,
		Owner: Owner{Scope: c.scNames[s.scope&^slotKeyed], Keyed: s.scope&slotKeyed != 0, Local: true, Alive: true},
	}
}

func (t *runTable) get(c *catalog, id string) (*Cached, bool) {
	if v, ok := t.other.Get(id); ok {
		return v, true
	}
	if i, ok := t.find(c, id); ok {
		return c.cached(id, t.log.at(i)), true
	}
	return nil, false
}

// put stores run id as v.
func (t *runTable) put(c *catalog, id string, v *Cached) {
	if _, ok := t.get(c, id); !ok {
		t.len++
	}
	t.other = t.other.Set(id, v)
}

// del removes run id: its record, and the slot it shadowed or was.
func (t *runTable) del(c *catalog, id string) {
	if _, ok := t.get(c, id); !ok {
		return
	}
	t.len--
	t.other = t.other.Delete(id)
	if i, ok := t.find(c, id); ok {
		t.dead.add(i)
	}
}

// admit appends the slot of the n-th run, just admitted at at with the given
// owner; nsI is the catalog index of its storage namespace (0: not in the
// catalog). The run is kept in the slot when it is plain (default session and
// model), owned here, in the catalog and new to this version; admit reports
// whether it was. When it was not, the caller stores it as a *Cached.
func (t *runTable) admit(c *catalog, id string, nsI uint32, n int64, at float64, owner Owner, plain bool) bool {
	if t.log == nil || t.log.n != t.n {
		t.log = t.log.fork(t.n)
	}
	if t.n == 0 {
		t.log.base = n - 1
	}
	if n != t.log.base+int64(t.n)+1 {
		return false // counters move only by admissions; never happens
	}
	s := slot{at: at}
	keep := plain && nsI != 0 && owner.Local && owner.Alive
	if keep {
		_, taken := t.get(c, id)
		scI, ok := intern(c.scIdx, &c.scNames, owner.Scope)
		keep = !taken && ok
		if owner.Keyed {
			scI |= slotKeyed
		}
		if keep {
			s = slot{at: at, ns: nsI, scope: scI}
		}
	}
	t.log.push(s)
	t.n++
	if keep {
		t.len++
	}
	return keep
}

// each calls f for every run present.
func (t *runTable) each(c *catalog, f func(id string, v *Cached)) {
	it := t.other.Iterator()
	for !it.Done() {
		id, v, _ := it.Next()
		f(id, v)
	}
	for i := 0; i < t.n; i++ {
		s := t.log.at(i)
		if s.ns == 0 || t.dead.has(i) {
			continue
		}
		id := runs.RunID(c.nsNames[s.ns], t.log.base+int64(i)+1)
		if _, ok := t.other.Get(id); ok {
			continue
		}
		if j, ok := t.find(c, id); ok && j == i {
			f(id, c.cached(id, s))
		}
	}
}
