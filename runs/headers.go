package runs

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
)

// MemoryKey reads X-Hermes-Session-Key (runs-api §6.1 step 3): raw is the header
// value as bytes (Latin-1); the result is the Python-stripped bytes. With an API
// key configured, a CR, LF or NUL is 400 "Invalid session key" and more than
// 256 characters 400 "Session key too long"; without one, either is the 501 of
// the seed package.
func MemoryKey(raw string, apiKey bool) (string, *Error) {
	m := PyStripLatin1(raw)
	bad := strings.ContainsAny(m, "\r\n\x00")
	long := len(m) > 256
	switch {
	case !bad && !long:
		return m, nil
	case !apiKey:
		return "", Unsupported("invalid memory-scope headers are outside the current subset")
	case bad:
		return "", ErrSessionInvalid
	default:
		return "", ErrSessionTooLong
	}
}

// ValidIdempotencyKey reports whether a stripped, non-empty key is 1–255
// characters of U+0021–U+007E (runs-api §6.1 step 8, §7). Header bytes ≥ 0x80
// are Latin-1 characters and so always invalid.
func ValidIdempotencyKey(key string) bool {
	if len(key) > 255 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// AdminKeyOK reports whether the x-mockingbird-admin-key header value (repeated
// occurrences joined with ", ") is exactly key, compared in constant time
// (controls §1; hardening H1).
func AdminKeyOK(header, key string) bool { return sameSecret(header, key) }

// sameSecret compares a presented secret with the expected one in a time that
// tells nothing about either, their lengths included: it compares their
// SHA-256 digests (subtle.ConstantTimeCompare returns at once on a length
// difference, which would tell the key's length).
func sameSecret(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// Authorized checks an Authorization header value against the API key
// (runs-api §14.3): "Bearer " exactly, then the Python-stripped rest compared in
// constant time with the key's UTF-8 bytes.
func Authorized(header, apiKey string) bool {
	const prefix = "Bearer "
	if !strings.HasPrefix(header, prefix) {
		return false
	}
	token := PyStripLatin1(header[len(prefix):])
	return sameSecret(token, apiKey)
}

// KeyProblem says why no request can present key, or returns "" when one can:
// as x-mockingbird-admin-key (bearer false) or as the token after "Bearer "
// (bearer true). HTTP header values carry no control characters (HTAB aside)
// and lose the spaces and tabs around them; the bearer token is also
// Python-stripped over its bytes (runs-api §14.3), so a key that begins or
// ends with such a byte (0x85 and 0xA0 included, as in the UTF-8 of "à") never
// matches. Such a key would answer 401 to every request.
func KeyProblem(key string, bearer bool) string {
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 && key[i] != '\t' || key[i] == 0x7f {
			return "contains a control character, which no HTTP header can carry"
		}
	}
	if bearer && PyStripLatin1(key) != key {
		return "begins or ends with whitespace, which the bearer check strips (a UTF-8 character ending in byte 0x85 or 0xA0 counts)"
	}
	if strings.Trim(key, " \t") != key {
		return "begins or ends with a space or tab, which HTTP drops from header values"
	}
	return ""
}
