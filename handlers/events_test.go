package handlers

import (
	"net/http"
	"net/textproto"
	"testing"
)

// SetSecurityHeaders writes the map directly, so the names must already be
// in net/http's canonical form, or Header.Get would not find them.
func TestSetSecurityHeaders(t *testing.T) {
	h := http.Header{}
	SetSecurityHeaders(h)
	if len(h) != len(SecurityHeaders) {
		t.Fatalf("%d headers set, want %d", len(h), len(SecurityHeaders))
	}
	for _, sh := range SecurityHeaders {
		if c := textproto.CanonicalMIMEHeaderKey(sh[0]); c != sh[0] {
			t.Errorf("header name %q is not canonical (%q)", sh[0], c)
		}
		if got := h.Values(sh[0]); len(got) != 1 || got[0] != sh[1] {
			t.Errorf("%s = %q, want [%q]", sh[0], got, sh[1])
		}
	}
}
