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

// The admin key is the exact header value (controls §1; hardening H1).
func TestAdminKeyOK(t *testing.T) {
	for _, tt := range []struct {
		header, key string
		want        bool
	}{
		{"ak", "ak", true},
		{"ak ", "ak", false},
		{" ak", "ak", false},
		{"akk", "ak", false},
		{"a", "ak", false},
		{"", "ak", false},
		{"ak, ak", "ak", false},
		{"AK", "ak", false},
	} {
		if got := AdminKeyOK(tt.header, tt.key); got != tt.want {
			t.Errorf("AdminKeyOK(%q, %q) = %v", tt.header, tt.key, got)
		}
	}
}

// Error messages echo at most EchoLimit bytes of a path (hardening H9), cut
// before a split UTF-8 character.
func TestEcho(t *testing.T) {
	long := strings.Repeat("r", 5000)
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"run_x", "run_x"},
		{long[:1024], long[:1024]},
		{long, long[:1024]},
		{long[:1023] + "é" + "tail", long[:1023]},
		{long[:1022] + "€" + "tail", long[:1022]},
	} {
		if got := Echo(tt.in); got != tt.want {
			t.Errorf("Echo(%d bytes) = %d bytes, want %d", len(tt.in), len(got), len(tt.want))
		}
	}
	if got := RunNotFound(long).Message; got != "Run not found: "+long[:1024] {
		t.Errorf("RunNotFound message of %d bytes", len(got))
	}
}

// The in-flight body bound's 503 (hardening H5).
func TestErrServerBusy(t *testing.T) {
	e := ErrServerBusy
	if e.Status != 503 || !e.RetryAfter() ||
		string(e.Body()) != `{"error":{"message":"Request body backlog full.","type":"invalid_request_error","param":null,"code":"server_busy"}}` {
		t.Fatalf("%d %v %s", e.Status, e.RetryAfter(), e.Body())
	}
}

func TestKeyProblem(t *testing.T) {
	tests := []struct {
		key    string
		bearer bool
		want   string
	}{
		{"ak", false, ""},
		{"ak", true, ""},
		{"a k", true, ""}, // inner spaces travel
		{"a\tk", false, ""},
		{" ak", false, "begins or ends with a space or tab, which HTTP drops from header values"},
		{"ak\t", true, "begins or ends with whitespace, which the bearer check strips (a UTF-8 character ending in byte 0x85 or 0xA0 counts)"},
		{"voilà", false, ""}, // as x-mockingbird-admin-key it arrives whole
		{"voilà", true, "begins or ends with whitespace, which the bearer check strips (a UTF-8 character ending in byte 0x85 or 0xA0 counts)"},
		{"a\nk", false, "contains a control character, which no HTTP header can carry"},
		{"ak\x7f", true, "contains a control character, which no HTTP header can carry"},
	}
	for _, tc := range tests {
		if got := KeyProblem(tc.key, tc.bearer); got != tc.want {
			t.Errorf("KeyProblem(%q, %v) = %q, want %q", tc.key, tc.bearer, got, tc.want)
		}
	}
}
