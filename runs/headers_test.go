package runs

import (
	"strings"
	"testing"
)

func TestMemoryKey(t *testing.T) {
	unsupported := "Mockingbird: invalid memory-scope headers are outside the current subset"
	cases := []struct {
		raw    string
		apiKey bool
		want   string
		err    string
		env    Envelope
	}{
		{"  synthetic-memory\t", false, "synthetic-memory", "", 0},
		{"\x85m\xa0", false, "m", "", 0},
		{"", true, "", "", 0},
		{strings.Repeat("m", 256), false, strings.Repeat("m", 256), "", 0},
		// acceptance 156
		{strings.Repeat("m", 257), false, "", unsupported, EnvUnsupported},
		{strings.Repeat("m", 257), true, "", "Session key too long", EnvSessionKey},
		{"a\nb", true, "", "Invalid session key", EnvSessionKey},
		{"a\x00b", false, "", unsupported, EnvUnsupported},
	}
	for _, c := range cases {
		got, err := MemoryKey(c.raw, c.apiKey)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("MemoryKey(%q,%v) = %q, %v; want %q", c.raw, c.apiKey, got, err, c.want)
			}
			continue
		}
		if err == nil || err.Message != c.err || err.Envelope != c.env {
			t.Errorf("MemoryKey(%q,%v) error = %v; want %q", c.raw, c.apiKey, err, c.err)
		}
	}
}

func TestValidIdempotencyKey(t *testing.T) {
	cases := map[string]bool{
		"delivery":               true,
		"a b":                    false, // acceptance 45
		strings.Repeat("x", 256): false,
		strings.Repeat("x", 255): true, // acceptance 46
		"\xe9":                   false,
		"a, b":                   false, // acceptance 51
		"~!":                     true,
		"\x7f":                   false,
	}
	for k, want := range cases {
		if got := ValidIdempotencyKey(k); got != want {
			t.Errorf("ValidIdempotencyKey(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestAuthorized(t *testing.T) { // acceptance 154
	cases := map[string]bool{"Bearer k": true, "Bearer  k ": true, "bearer k": false, "Bearer x": false, "": false, "Bearer": false, "Bearerk": false}
	for h, want := range cases {
		if got := Authorized(h, "k"); got != want {
			t.Errorf("Authorized(%q) = %v, want %v", h, got, want)
		}
	}
}
