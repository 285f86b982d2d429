package gateway

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"

	"github.com/benbjohnson/immutable"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The reservations of one State, kept small the way its runs are (runtable.go).
// Under a keyed load nearly every reservation is the one its admission wrote —
// queued, its record the plain admission record, owned here — and such a
// reservation is fully given by its run (storage namespace and counter n), its
// time, its scope, its key and its fingerprint. It is kept as an entry of an
// append-only log shared by every version: 4 bytes of time, n and the
// fingerprint (interned: a suite sends the same body many times) as lazyInts
// columns, and the key as chunkKeys keeps it, behind a one-byte hash tag; a hash index of the log finds an entry by (scope, key), the catalog's
// run index and a binary search over n find it by run. A reservation that
// changes, or is not plain, is a *Reservation in a persistent map, and its
// entry is marked dead in the version.
//
// A logical restart rewrites every owner (runs-api §10.3): a version records it
// as the log length at the restart and the alive flag, which apply to every
// entry before that length, rather than rewriting entries.

// resLog is the shared log of plain reservations.
type resLog struct {
	chunks  []*resChunk
	classes []classRun // (ns, scope) by from, ascending
	nss     []uint32   // the storage namespaces of its entries
	n       int
	index   []uint32 // open addressing by hashKey: entry index + 1, 0 = empty
	count   int
}

// resChunk holds slotChunk entries; only the log's last chunk grows.
type resChunk struct {
	times timeChunk
	tags  []uint8 // the low byte of the entry's hashKey: most probes stop here; one an entry
	keys  chunkKeys
	runs  lazyInts // run counters, ascending over the whole log
	fps   lazyInts // catalog index of the fingerprint
}

// lazyInts is a column of a chunk that usually follows a rule: the run
// counters of a keyed load are consecutive, and its fingerprints one. Value j
// is first + j·step until a value breaks the rule; only then is the column
// kept value by value.
type lazyInts struct {
	first, step uint32
	vals        []uint32 // nil while the rule holds
}

func (c *lazyInts) get(j int) uint32 {
	if c.vals == nil {
		return c.first + uint32(j)*c.step
	}
	return c.vals[j]
}

// push appends v as value j (the column holds j values).
func (c *lazyInts) push(j int, v uint32) {
	switch {
	case j == 0:
		c.first = v
		return
	case c.vals == nil && v == c.first+uint32(j)*c.step:
		return
	case c.vals == nil:
		c.vals = make([]uint32, j, slotChunk)
		for k := range j {
			c.vals[k] = c.first + uint32(k)*c.step
		}
	}
	c.vals = append(c.vals, v)
}

// prefix is a copy of the first r values.
func (c *lazyInts) prefix(r int) lazyInts {
	if c.vals == nil {
		return *c
	}
	return lazyInts{first: c.first, step: c.step, vals: slices.Clone(c.vals[:r])}
}

// chunkKeys holds the keys of a chunk. Keys of one suite tend to share a
// prefix ("order-17-…", a run's timestamp), so each key is kept as the bytes
// it shares with the chunk's first key plus its own suffix: the suffixes are
// packed, with their lengths, and the offset of every keyMark-th suffix.
// Keys are 1–255 bytes (runs-api §6.1), so a length is a byte.
type chunkKeys struct {
	first  string
	shared []uint8  // bytes shared with first
	slen   []uint8  // suffix length
	marks  []uint32 // offset in suf of suffix keyMark·m
	suf    []byte
}

const keyMark = 64

// sufOff is the offset in suf of the suffix of key j; j may be the number of
// keys (the end of suf).
func (k *chunkKeys) sufOff(j int) int {
	if j == len(k.shared) {
		return len(k.suf)
	}
	off := int(k.marks[j/keyMark])
	for _, n := range k.slen[j&^(keyMark-1) : j] {
		off += int(n)
	}
	return off
}

// sufAt returns the suffix of key j.
func (k *chunkKeys) sufAt(j int) []byte {
	off := k.sufOff(j)
	return k.suf[off : off+int(k.slen[j])]
}

// is reports whether key j is key.
func (k *chunkKeys) is(j int, key string) bool {
	p := int(k.shared[j])
	return len(key) == p+int(k.slen[j]) && key[:p] == k.first[:p] && string(k.sufAt(j)) == key[p:]
}

// appendKey appends key j to dst.
func (k *chunkKeys) appendKey(dst []byte, j int) []byte {
	return append(append(dst, k.first[:k.shared[j]]...), k.sufAt(j)...)
}

// push appends key; callers keep keys to 1–255 bytes (resTable.admit).
func (k *chunkKeys) push(key string) {
	if len(k.shared) == 0 {
		k.first = strings.Clone(key)
	}
	p := 0
	for p < len(key) && p < len(k.first) && key[p] == k.first[p] {
		p++
	}
	if len(k.shared)%keyMark == 0 {
		k.marks = append(k.marks, uint32(len(k.suf)))
	}
	k.shared = append(k.shared, uint8(p))
	k.slen = append(k.slen, uint8(len(key)-p))
	k.suf = append(k.suf, key[p:]...)
}

// prefix is a copy of the first r keys.
func (k *chunkKeys) prefix(r int) chunkKeys {
	return chunkKeys{first: k.first, shared: slices.Clone(k.shared[:r]), slen: slices.Clone(k.slen[:r]),
		marks: slices.Clone(k.marks[:(r+keyMark-1)/keyMark]), suf: slices.Clone(k.suf[:k.sufOff(r)])}
}

// resEntry is one entry of a log, decoded, but for its key.
type resEntry struct {
	n         int64
	at        float64
	ns, scope uint32
	fp        uint32
}

var keySeed = maphash.MakeSeed()

func hashKey(scope uint32, key string) uint32 {
	return mixKey(scope, maphash.String(keySeed, key))
}

// hashKeyBytes is hashKey of string(key).
func hashKeyBytes(scope uint32, key []byte) uint32 {
	return mixKey(scope, maphash.Bytes(keySeed, key))
}

func mixKey(scope uint32, h uint64) uint32 { return uint32(h>>32) ^ uint32(h) ^ scope*0x9E3779B9 }

func (l *resLog) class(i int) classRun {
	return l.classes[sort.Search(len(l.classes), func(k int) bool { return l.classes[k].from > i })-1]
}

func (l *resLog) entry(i int) resEntry {
	c, j, k := l.chunks[i/slotChunk], i%slotChunk, l.class(i)
	return resEntry{n: int64(c.runs.get(j)), at: c.times.get(j), ns: k.ns, scope: k.scope, fp: c.fps.get(j)}
}

func (l *resLog) key(i int) string {
	return string(l.chunks[i/slotChunk].keys.appendKey(nil, i%slotChunk))
}

func (l *resLog) runN(i int) uint32 { return l.chunks[i/slotChunk].runs.get(i % slotChunk) }

func (l *resLog) push(e resEntry, key string) {
	if !slices.Contains(l.nss, e.ns) {
		l.nss = append(l.nss, e.ns)
	}
	if k := len(l.classes) - 1; k < 0 || l.classes[k].ns != e.ns || l.classes[k].scope != e.scope {
		l.classes = append(l.classes, classRun{l.n, e.ns, e.scope})
	}
	if l.n%slotChunk == 0 {
		l.chunks = append(l.chunks, &resChunk{times: timeChunk{delta: make([]int32, 0, slotChunk)},
			runs: lazyInts{step: 1}, tags: make([]uint8, 0, slotChunk),
			keys: chunkKeys{shared: make([]uint8, 0, slotChunk), slen: make([]uint8, 0, slotChunk),
				marks: make([]uint32, 0, slotChunk/keyMark)}})
	}
	c := l.chunks[len(l.chunks)-1]
	h := hashKey(e.scope, key)
	c.times.push(e.at)
	c.runs.push(len(c.tags), uint32(e.n))
	c.fps.push(len(c.tags), e.fp)
	c.tags = append(c.tags, uint8(h))
	c.keys.push(key)
	if len(c.tags) == slotChunk && cap(c.keys.suf)-len(c.keys.suf) > len(c.keys.suf)/8 {
		c.keys.suf = slices.Clone(c.keys.suf) // full: it never grows again
	}
	l.n++
	l.place(l.n-1, h)
}

// place puts entry i into the index, growing it at 7/8 full.
func (l *resLog) place(i int, h uint32) {
	if full(l.count, len(l.index)) {
		old := l.index
		l.index = make([]uint32, grown(len(old)))
		l.count = 0
		var key []byte
		for _, v := range old {
			if v != 0 && int(v-1) < l.n { // a slot a fork copied may name an entry not yet appended
				j := int(v - 1)
				key = l.chunks[j/slotChunk].keys.appendKey(key[:0], j%slotChunk)
				l.put(j, hashKeyBytes(l.class(j).scope, key))
			}
		}
	}
	l.put(i, h)
}

func (l *resLog) put(i int, h uint32) {
	size := len(l.index)
	b := bucket(h, size)
	for l.index[b] != 0 {
		b = probe(b, size)
	}
	l.index[b] = uint32(i + 1)
	l.count++
}

// fork is a new log holding l's first n entries; full chunks are shared.
// It costs a copy of the index (4 bytes an entry), not a rehash.
func (l *resLog) fork(n int) *resLog {
	nl := &resLog{}
	if l == nil || n == 0 {
		return nl
	}
	k := sort.Search(len(l.classes), func(k int) bool { return l.classes[k].from >= n })
	nl.classes = slices.Clone(l.classes[:k])
	for _, c := range nl.classes {
		if !slices.Contains(nl.nss, c.ns) {
			nl.nss = append(nl.nss, c.ns)
		}
	}
	full := n / slotChunk
	nl.chunks = append(make([]*resChunk, 0, full+1), l.chunks[:full]...)
	if r := n % slotChunk; r > 0 {
		c := l.chunks[full]
		nl.chunks = append(nl.chunks, &resChunk{times: *c.times.prefix(r),
			runs: c.runs.prefix(r), fps: c.fps.prefix(r), tags: slices.Clone(c.tags[:r]),
			keys: c.keys.prefix(r)})
	}
	// The index is copied, not rebuilt: its slots for entries at n or later
	// now name other entries (or none yet), and findKey checks every
	// candidate's scope and key, so they cost a comparison, never a wrong answer.
	nl.n = n
	nl.index, nl.count = slices.Clone(l.index), l.count
	return nl
}

// resTable is one version of the reservations: the first n entries of log
// that are not dead, and other.
type resTable struct {
	log   *resLog
	n     int
	dead  deadSet
	other *immutable.Map[string, *Reservation] // by resKey(scope, key)
	byRun *immutable.Map[string, []string]     // run id → the resKeys in other with that id, by N
	len   int

	restartedBelow int  // entries before it have owners rewritten by a restart
	restartAlive   bool // the alive flag that restart gave them
}

func newResTable() resTable {
	return resTable{other: immutable.NewMap[string, *Reservation](nil), byRun: immutable.NewMap[string, []string](nil)}
}

// findKey returns the index of the live entry for (scope, key).
func (t *resTable) findKey(c *catalog, scope, key string) (int, bool) {
	l := t.log
	if l == nil || t.n == 0 || len(l.index) == 0 {
		return 0, false
	}
	scI, ok := c.scIdx[scope]
	if !ok {
		return 0, false
	}
	h := hashKey(scI, key)
	size := len(l.index)
	for b := bucket(h, size); l.index[b] != 0; b = probe(b, size) {
		i := int(l.index[b] - 1)
		if i >= t.n || t.dead.has(i) {
			continue
		}
		if c, j := l.chunks[i/slotChunk], i%slotChunk; c.tags[j] == uint8(h) && l.class(i).scope == scI && c.keys.is(j, key) {
			return i, true
		}
	}
	return 0, false
}

// findRun returns the index of the live entry of run id.
func (t *resTable) findRun(c *catalog, id string) (int, bool) {
	l := t.log
	if l == nil || t.n == 0 {
		return 0, false
	}
	found := -1
	c.counters(id, l.nss, func(ns uint32, n int64) bool {
		i := sort.Search(t.n, func(i int) bool { return int64(l.runN(i)) >= n })
		for ; i < t.n && int64(l.runN(i)) == n; i++ {
			if l.class(i).ns == ns && !t.dead.has(i) {
				found = i
				return true
			}
		}
		return false
	})
	return found, found >= 0
}

// reservation renders entry i.
func (t *resTable) reservation(c *catalog, i int) *Reservation {
	e := t.log.entry(i)
	scope := c.scNames[e.scope]
	owner := Owner{Scope: scope, Keyed: true, Local: true, Alive: true}
	if i < t.restartedBelow {
		owner.Local, owner.Alive = false, t.restartAlive
	}
	return &Reservation{Scope: scope, Key: t.log.key(i), Fingerprint: c.fpNames[e.fp],
		RunID: runs.RunID(c.nsNames[e.ns], e.n), N: e.n, Owner: owner, Status: runs.Queued, UpdatedAt: e.at}
}

func (t *resTable) get(c *catalog, scope, key string) (*Reservation, bool) {
	if r, ok := t.other.Get(resKey(scope, key)); ok {
		return r, true
	}
	if i, ok := t.findKey(c, scope, key); ok {
		return t.reservation(c, i), true
	}
	return nil, false
}

// ofRun returns the reservation of run id.
func (t *resTable) ofRun(c *catalog, id string) (*Reservation, bool) {
	if ks, ok := t.byRun.Get(id); ok {
		return t.other.Get(ks[len(ks)-1])
	}
	if i, ok := t.findRun(c, id); ok {
		return t.reservation(c, i), true
	}
	return nil, false
}

// put stores r, replacing the reservation of its (scope, key).
func (t *resTable) put(c *catalog, r *Reservation) {
	k := resKey(r.Scope, r.Key)
	if old, ok := t.other.Get(k); ok {
		t.dropKey(old.RunID, k)
	} else if i, ok := t.findKey(c, r.Scope, r.Key); ok {
		t.dead.add(i)
	} else {
		t.len++
	}
	// byRun lists the keys of a run id by counter: ids repeat (runs-api
	// §12.1), and the newest run answers for its id, so a list holds more than
	// one key only then.
	ks, _ := t.byRun.Get(r.RunID)
	i := sort.Search(len(ks), func(i int) bool { o, _ := t.other.Get(ks[i]); return o.N > r.N })
	t.byRun = t.byRun.Set(r.RunID, slices.Insert(slices.Clone(ks), i, k))
	t.other = t.other.Set(k, r)
}

// dropKey removes k from the byRun list of run id.
func (t *resTable) dropKey(id, k string) {
	ks, _ := t.byRun.Get(id)
	if ks = slices.DeleteFunc(slices.Clone(ks), func(s string) bool { return s == k }); len(ks) == 0 {
		t.byRun = t.byRun.Delete(id)
	} else {
		t.byRun = t.byRun.Set(id, ks)
	}
}

// del removes the reservation of (scope, key).
func (t *resTable) del(c *catalog, scope, key string) {
	k := resKey(scope, key)
	if r, ok := t.other.Get(k); ok {
		t.other = t.other.Delete(k)
		t.dropKey(r.RunID, k)
		t.len--
		return
	}
	if i, ok := t.findKey(c, scope, key); ok {
		t.dead.add(i)
		t.len--
	}
}

// admit keeps r, the plain reservation of a run just admitted in storage
// namespace nsI (catalog index) with a (scope, key) new to this version, as a
// log entry, and reports whether it could: the caller stores it as a
// *Reservation otherwise.
func (t *resTable) admit(c *catalog, nsI uint32, r *Reservation) bool {
	// Keys are 1–255 characters (runs-api §6.1); a chunk is sized by its first.
	if nsI == 0 || r.N < 1 || r.N > 1<<32-1 || len(r.Key) > 255 {
		return false
	}
	scI, ok := intern(c.scIdx, &c.scNames, r.Scope)
	if !ok {
		return false
	}
	fpI, ok := intern(c.fpIdx, &c.fpNames, r.Fingerprint)
	if !ok {
		return false
	}
	if _, taken := t.ofRun(c, r.RunID); taken {
		return false // an earlier run with the same id (its 32-bit hash): the newer must shadow it
	}
	if t.log == nil || t.log.n != t.n {
		t.log = t.log.fork(t.n)
	}
	if t.n > 0 && int64(t.log.runN(t.n-1)) >= r.N {
		return false // counters only grow within a log; never happens
	}
	t.log.push(resEntry{n: r.N, at: r.UpdatedAt, ns: nsI, scope: scI, fp: fpI}, r.Key)
	t.n++
	t.len++
	return true
}

// restarted rewrites every owner as a logical restart does (runs-api §10.3).
func (t *resTable) restarted(alive bool) {
	t.restartedBelow, t.restartAlive = t.n, alive
	res := immutable.NewMap[string, *Reservation](nil)
	it := t.other.Iterator()
	for !it.Done() {
		k, r, _ := it.Next()
		nr := *r
		nr.Owner.Local, nr.Owner.Alive = false, alive
		res = res.Set(k, &nr)
	}
	t.other = res
}

// each calls f with every reservation.
func (t *resTable) each(c *catalog, f func(r *Reservation)) {
	it := t.other.Iterator()
	for !it.Done() {
		_, r, _ := it.Next()
		f(r)
	}
	for i := range t.n {
		if !t.dead.has(i) {
			f(t.reservation(c, i))
		}
	}
}
