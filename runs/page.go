package runs

import (
	"cmp"
	"encoding/base64"
	"math"
	"strconv"
	"strings"
)

// PageKey is where a run stands in the control plane's run listing, newest
// first: by created_at (record seconds), then by run id, both descending.
type PageKey struct {
	CreatedAt float64
	ID        string
}

// Compare orders keys as the listing does: negative when k is listed before o
// (k is newer), 0 when they are equal.
func (k PageKey) Compare(o PageKey) int {
	return cmp.Or(cmp.Compare(o.CreatedAt, k.CreatedAt), strings.Compare(o.ID, k.ID))
}

// Before reports whether k is listed before o (k is newer).
func (k PageKey) Before(o PageKey) bool { return k.Compare(o) < 0 }

// Cursor is the opaque cursor of the page that follows k.
func (k PageKey) Cursor() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatFloat(k.CreatedAt, 'g', -1, 64) + "/" + k.ID))
}

// ParseCursor reads a cursor made by Cursor; "" is the first page (the zero
// PageKey). ok is false for anything else, a time that is not a finite
// number included.
func ParseCursor(c string) (k PageKey, ok bool) {
	if c == "" {
		return PageKey{}, true
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	at, id, found := strings.Cut(string(b), "/")
	if err != nil || !found {
		return PageKey{}, false
	}
	f, err := strconv.ParseFloat(at, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return PageKey{}, false
	}
	return PageKey{CreatedAt: f, ID: id}, true
}

// ErrCursor answers a cursor that is not the next of a previous page (the run
// listing and the journal pages).
var ErrCursor = Admin(400, "cursor: expected the next of a previous page")
