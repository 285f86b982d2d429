package journal

import (
	"cmp"
	"container/list"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Journal is the request journal (controls.md §7): one ring buffer per
// namespace holding its newest Size entries, plus a global arrival sequence
// so that every namespace can be listed in arrival order. It is process
// state: not cleared by reset, not restored by checkout, not persisted. All
// methods are safe for concurrent use.
//
// Its memory is bounded against hostile traffic (hardening H3, H9): an entry
// keeps at most the first runs.EchoLimit bytes of its namespace, method and
// path, and the journal holds at most Limit entries in all. An entry that
// would exceed Limit drops the rings of the namespaces journaled least
// recently, whole, until it fits — so requests naming ever new namespaces
// (401s and 404s included) displace each other, not the busy namespaces.
type Journal struct {
	size   int
	limit  int
	mu     sync.Mutex
	seq    uint64
	total  int              // entries in all rings
	spaces map[string]*ring // by namespace
	recent *list.List       // of *ring, least recently journaled first
}

// record is a stored entry with its global arrival number.
type record struct {
	seq uint64
	e   Entry
}

// ring keeps the newest cap entries of one namespace. buf grows up to cap,
// then start marks the oldest entry and new entries overwrite it.
type ring struct {
	ns    string
	buf   []record
	start int
	at    *list.Element // the ring's place in Journal.recent
}

// add stores rec and reports whether the ring grew (false: it overwrote its
// oldest entry).
func (r *ring) add(rec record, capacity int) bool {
	if len(r.buf) < capacity {
		r.buf = append(r.buf, rec)
		return true
	}
	r.buf[r.start] = rec
	r.start++
	if r.start == len(r.buf) {
		r.start = 0
	}
	return false
}

// FullNamespaces is how many namespaces' full rings the journal holds at
// most: Limit is FullNamespaces × Size entries (100,000 by default).
const FullNamespaces = 100

// New returns a journal keeping size entries per namespace (--journal-size,
// default 1000) and at most FullNamespaces × size in all; size 0 keeps
// nothing. A negative size counts as 0.
func New(size int) *Journal {
	size = max(size, 0)
	limit := math.MaxInt
	if size <= math.MaxInt/FullNamespaces {
		limit = size * FullNamespaces
	}
	return &Journal{size: size, limit: limit, spaces: make(map[string]*ring), recent: list.New()}
}

// Size is the capacity of each namespace's ring (the `size` of GET /__admin/requests).
func (j *Journal) Size() int { return j.size }

// Limit is the most entries the journal holds in all namespaces together.
func (j *Journal) Limit() int { return j.limit }

// Add records e under e.Namespace, rounding DurationMs to 2 decimals
// (controls.md §7.1): callers pass the raw, unrounded milliseconds. The
// namespace, method and path, and the content type and transfer encoding of
// its Request, are cut to their first runs.EchoLimit bytes. The oldest entry
// of that namespace is dropped when its ring is full, and the rings of the
// namespaces journaled least recently when the journal holds Limit entries. The entry's Issues are kept as given: the caller must not
// change them later.
func (j *Journal) Add(e Entry) {
	if j.size == 0 {
		return
	}
	e.DurationMs = roundMs(e.DurationMs)
	e.Method, e.Path = keep(e.Method), keep(e.Path)
	if m := e.Request; m != nil {
		// Header values come from the client, up to the header limit (1 MB).
		e.Request = &RequestMeta{ContentType: keepPtr(m.ContentType), TransferEncoding: keepPtr(m.TransferEncoding), BodyBytes: m.BodyBytes}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	r := j.spaces[runs.Echo(e.Namespace)]
	if r == nil {
		r = &ring{ns: keep(e.Namespace)}
		r.at = j.recent.PushBack(r)
		j.spaces[r.ns] = r
	} else {
		j.recent.MoveToBack(r.at)
	}
	e.Namespace = r.ns
	if r.add(record{seq: j.seq, e: e}, j.size) {
		j.total++
	}
	// The newest ring is never dropped: it holds at most size <= limit entries.
	for j.total > j.limit {
		j.drop(j.recent.Front().Value.(*ring))
	}
}

// keep returns the first runs.EchoLimit bytes of s as a copy: a string cut
// from the request line would keep all of it (query string included) alive.
func keep(s string) string { return strings.Clone(runs.Echo(s)) }

// keepPtr is keep for an optional header value (nil stays nil).
func keepPtr(s *string) *string {
	if s == nil {
		return nil
	}
	k := keep(*s)
	return &k
}

// drop removes ring r and its entries. The caller holds j.mu.
func (j *Journal) drop(r *ring) {
	j.total -= len(r.buf)
	j.recent.Remove(r.at)
	delete(j.spaces, r.ns)
}

// check verifies the invariants of the journal's bookkeeping: every ring is
// in spaces under its name and once in recent, none is empty or over size,
// total counts their entries and stays within limit. Tests call it.
func (j *Journal) check() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.recent.Len() != len(j.spaces) {
		return fmt.Errorf("recent holds %d rings, spaces %d", j.recent.Len(), len(j.spaces))
	}
	n := 0
	for el := j.recent.Front(); el != nil; el = el.Next() {
		r := el.Value.(*ring)
		switch {
		case j.spaces[r.ns] != r || r.at != el:
			return fmt.Errorf("ring %q: not the one in spaces or recent", r.ns)
		case len(r.buf) == 0 || len(r.buf) > j.size:
			return fmt.Errorf("ring %q holds %d entries (size %d)", r.ns, len(r.buf), j.size)
		}
		n += len(r.buf)
	}
	if n != j.total || n > j.limit {
		return fmt.Errorf("total %d, rings hold %d, limit %d", j.total, n, j.limit)
	}
	return nil
}

// Errors of GET /__admin/requests (controls.md §7.2, H9).
var (
	errSince  = runs.Admin(400, "since: expected epoch ms or ISO-8601")
	errStatus = runs.Admin(400, "status: expected an HTTP status")
	errLimit  = runs.Admin(400, "limit: expected a count")
)

// Page sizes of GET /__admin/requests (H9): a listing never builds one giant
// body.
const (
	DefaultLimit = 1000
	MaxLimit     = 10000
)

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Query is GET /__admin/requests (controls.md §7.2, H9) for admin namespace
// ns. Parameters (the first value of each; an empty value counts as absent)
// are checked in this order:
//
//   - since: all digits → epoch ms, else ISO-8601 (runs.ParseISO8601); keeps
//     entries with at >= since → else 400 `since: expected epoch ms or ISO-8601`;
//   - status: exactly 3 digits; exact match → else 400 `status: expected an HTTP status`;
//   - limit: digits; the page holds the newest N after filtering; default
//     DefaultLimit; 0 and anything above MaxLimit mean MaxLimit → else 400
//     `limit: expected a count`;
//   - cursor: the `next` of a previous page: only entries older than it →
//     else 400 `cursor: expected the next of a previous page`;
//   - operationId: exact match (unmatched entries never match);
//   - all=1: every namespace, in global arrival order.
//
// It returns {"size":<capacity>,"requests":[<entries, oldest first>]}, plus
// "next":"<cursor>" when older matching entries remain.
func (j *Journal) Query(ns string, q url.Values) ([]byte, *runs.Error) {
	since, hasSince := 0.0, false
	if s := q.Get("since"); s != "" {
		hasSince = true
		if allDigits(s) {
			since, _ = strconv.ParseFloat(s, 64)
		} else {
			ms, ok := runs.ParseISO8601(s)
			if !ok {
				return nil, errSince
			}
			since = ms
		}
	}
	status := -1
	if s := q.Get("status"); s != "" {
		if len(s) != 3 || !allDigits(s) {
			return nil, errStatus
		}
		status, _ = strconv.Atoi(s)
	}
	limit := DefaultLimit
	if s := q.Get("limit"); s != "" {
		if !allDigits(s) {
			return nil, errLimit
		}
		n, err := strconv.Atoi(s)
		switch {
		case err != nil || n > MaxLimit || n == 0:
			n = MaxLimit
		}
		limit = n
	}
	before := uint64(math.MaxUint64)
	if s := q.Get("cursor"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || !allDigits(s) || n == 0 {
			return nil, runs.ErrCursor
		}
		before = n
	}
	op := q.Get("operationId")

	keep := func(rec *record) bool {
		e := &rec.e
		return rec.seq < before && (!hasSince || e.At >= since) && (status < 0 || e.Status == status) &&
			(op == "" || e.OperationID == op)
	}
	kept := j.matching(ns, q.Get("all") == "1", keep)
	next := ""
	if len(kept) > limit {
		kept = kept[len(kept)-limit:]
		next = strconv.FormatUint(kept[0].seq, 10)
	}

	b := []byte(`{"size":`)
	b = strconv.AppendInt(b, int64(j.size), 10)
	b = append(b, `,"requests":[`...)
	for i := range kept {
		if i > 0 {
			b = append(b, ',')
		}
		b = kept[i].e.AppendJSON(b)
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"next":`...)
		b = append(b, runs.QuoteString(next)...)
	}
	return append(b, '}'), nil
}

// matching returns the records of namespace ns (every namespace with all, in
// global arrival order) that keep accepts, oldest first. Like Count and Clear,
// it looks ns up by its first runs.EchoLimit bytes, the name Add stored it
// under: a longer name is found by the name the client sent.
func (j *Journal) matching(ns string, all bool, keep func(*record) bool) []record {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []record
	add := func(r *ring) {
		for _, part := range [][]record{r.buf[r.start:], r.buf[:r.start]} {
			for i := range part {
				if keep(&part[i]) {
					out = append(out, part[i])
				}
			}
		}
	}
	if all {
		for _, r := range j.spaces {
			add(r)
		}
		slices.SortFunc(out, func(a, b record) int { return cmp.Compare(a.seq, b.seq) })
	} else if r := j.spaces[runs.Echo(ns)]; r != nil {
		add(r)
	}
	return out
}

// Filter selects journal entries for Count; zero fields match everything.
type Filter struct {
	Method      string // case-insensitive
	OperationID string // exact; unmatched entries never match
	PathPrefix  string
	Status      int  // with HasStatus
	HasStatus   bool // Status is set (0 = dropped connections)
}

// Count is POST /__admin/requests/count: the number of entries of namespace
// ns (every namespace with all) that match f.
func (j *Journal) Count(ns string, all bool, f Filter) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	count := func(r *ring) {
		for i := range r.buf {
			e := &r.buf[i].e
			if (f.Method == "" || strings.EqualFold(e.Method, f.Method)) &&
				(f.OperationID == "" || e.OperationID == f.OperationID) &&
				strings.HasPrefix(e.Path, f.PathPrefix) && (!f.HasStatus || e.Status == f.Status) {
				n++
			}
		}
	}
	if all {
		for _, r := range j.spaces {
			count(r)
		}
	} else if r := j.spaces[runs.Echo(ns)]; r != nil {
		count(r)
	}
	return n
}

// Clear is DELETE /__admin/requests (controls.md §7.3): the entries of
// namespace ns, or of every namespace when all is set.
func (j *Journal) Clear(ns string, all bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if all {
		clear(j.spaces)
		j.recent.Init()
		j.total = 0
		return
	}
	if r := j.spaces[runs.Echo(ns)]; r != nil {
		j.drop(r)
	}
}
