// Package credentials holds the credential → namespace mapping of the control
// plane (controls.md §10). It is kept for interface compatibility only: this
// service has no credential extractor, so a mapping never changes how a vendor
// request is routed. It has no HTTP code; the admin router writes what it returns.
package credentials

import (
	"slices"
	"strconv"
	"sync"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Store is the process-wide credential mapping: not cleared by reset, not
// restored by checkout. All methods are safe for concurrent use.
type Store struct {
	mu sync.Mutex
	m  map[string]string // credential → namespace
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{m: make(map[string]string)} }

// Errors of PUT /__admin/credentials (controls.md §10), all 400 admin envelope.
const (
	msgEntry    = "each entry is a credential string or {credential, namespace}"
	msgExpected = `expected {"credentials": {"<credential>": "<namespace>"}}`
)

// Put is PUT /__admin/credentials (controls.md §10). adminNS is the admin
// namespace, the default namespace of an entry. Accepted bodies:
//
//   - {"credentials":{"<credential>":"<namespace>",…}};
//   - an array, or {"credentials":[…]}, of credential strings (mapped to
//     adminNS) or {"credential":"…","namespace":"…"} objects (namespace absent
//     or null → adminNS);
//   - a single {"credential":"…","namespace":"…"} object.
//
// Pairs are checked and applied one by one, in order; the first error stops
// processing and the pairs applied before it stay applied. Errors (400):
// `each entry is a credential string or {credential, namespace}` (an entry of
// another shape, or a "credential" that is not a string), `namespace for
// <credential> must be a string`, `bad namespace "<namespace>"` (pattern
// ^[A-Za-z0-9_.-]{1,64}$; both quote at most runs.EchoLimit bytes),
// `credential longer than 4096 bytes`, and `expected {"credentials":
// {"<credential>": "<namespace>"}}` for any other body; 409 `too many
// credentials (max 10000)` (apply). Success → 200 {"mapped":<n>}.
func (s *Store) Put(adminNS string, body runs.Value, hasBody bool) ([]byte, *runs.Error) {
	if !hasBody {
		return nil, runs.Admin(400, msgExpected)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch body.Kind {
	case runs.Array:
		return s.putEntries(adminNS, body.Arr)
	case runs.Object:
		if c, ok := body.Obj.Get("credentials"); ok {
			switch c.Kind {
			case runs.Object:
				return s.putMap(c.Obj)
			case runs.Array:
				return s.putEntries(adminNS, c.Arr)
			}
			return nil, runs.Admin(400, msgExpected)
		}
		if body.Obj.Has("credential") {
			return s.putEntries(adminNS, []runs.Value{body})
		}
	}
	return nil, runs.Admin(400, msgExpected)
}

func mapped(n int) []byte { return []byte(`{"mapped":` + strconv.Itoa(n) + `}`) }

// Bounds of the mapping (hardening H3: a client must not grow memory without
// bound): at most MaxCredentials credentials of at most MaxCredentialBytes
// bytes each.
const (
	MaxCredentials     = 10000
	MaxCredentialBytes = 4096
)

// apply maps cred to ns after the pattern check and the bounds: a longer
// credential → 400 `credential longer than 4096 bytes`; one more credential
// than MaxCredentials → 409 `too many credentials (max 10000)`. Callers hold
// s.mu.
func (s *Store) apply(cred, ns string) *runs.Error {
	if !runs.ValidName(ns) {
		return runs.Admin(400, `bad namespace "`+runs.Echo(ns)+`"`)
	}
	if len(cred) > MaxCredentialBytes {
		return runs.Admin(400, "credential longer than "+strconv.Itoa(MaxCredentialBytes)+" bytes")
	}
	if _, ok := s.m[cred]; !ok && len(s.m) >= MaxCredentials {
		return runs.Admin(409, "too many credentials (max "+strconv.Itoa(MaxCredentials)+")")
	}
	s.m[cred] = ns
	return nil
}

// notString is the error of a namespace that is not a string (the
// credential cut to runs.EchoLimit bytes, hardening H9).
func notString(cred string) *runs.Error {
	return runs.Admin(400, "namespace for "+runs.Echo(cred)+" must be a string")
}

func (s *Store) putMap(o *runs.Obj) ([]byte, *runs.Error) {
	for i, cred := range o.Keys {
		v := o.Vals[i]
		if v.Kind != runs.String {
			return nil, notString(cred)
		}
		if err := s.apply(cred, v.Str); err != nil {
			return nil, err
		}
	}
	return mapped(o.Len()), nil
}

func (s *Store) putEntries(adminNS string, entries []runs.Value) ([]byte, *runs.Error) {
	for _, e := range entries {
		cred, ns := "", adminNS
		switch e.Kind {
		case runs.String:
			cred = e.Str
		case runs.Object:
			c, ok := e.Obj.Get("credential")
			if !ok || c.Kind != runs.String {
				return nil, runs.Admin(400, msgEntry)
			}
			cred = c.Str
			if n, ok := e.Obj.Get("namespace"); ok && n.Kind != runs.Null {
				if n.Kind != runs.String {
					return nil, notString(cred)
				}
				ns = n.Str
			}
		default:
			return nil, runs.Admin(400, msgEntry)
		}
		if err := s.apply(cred, ns); err != nil {
			return nil, err
		}
	}
	return mapped(len(entries)), nil
}

// Mask renders a credential for listing (controls.md §10): up to 8 code
// points → the first 2 + "…"; longer → the first 6 + "…" + the last 2.
func Mask(cred string) string {
	r := []rune(cred)
	if len(r) <= 8 {
		return string(r[:min(2, len(r))]) + "…"
	}
	return string(r[:6]) + "…" + string(r[len(r)-2:])
}

// List is the GET /__admin/credentials body (controls.md §10):
// {"credentials":[{"credential":"<masked>","namespace":"…"},…]} sorted by the
// unmasked credential (code point order).
func (s *Store) List() []byte {
	s.mu.Lock()
	creds := make([]string, 0, len(s.m))
	for c := range s.m {
		creds = append(creds, c)
	}
	slices.Sort(creds)
	b := []byte(`{"credentials":[`)
	for i, c := range creds {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"credential":`...)
		b = append(b, runs.QuoteString(Mask(c))...)
		b = append(b, `,"namespace":`...)
		b = append(b, runs.QuoteString(s.m[c])...)
		b = append(b, '}')
	}
	s.mu.Unlock()
	return append(b, "]}"...)
}

// Delete is DELETE /__admin/credentials (controls.md §10): with one set
// (?credential=<c>) it removes that credential (absent is fine), otherwise
// every mapping.
func (s *Store) Delete(credential string, one bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if one {
		delete(s.m, credential)
		return
	}
	clear(s.m)
}
