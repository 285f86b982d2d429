package runs

import (
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
func AdminKeyOK(header, key string) bool {
	return subtle.ConstantTimeCompare([]byte(header), []byte(key)) == 1
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
	return subtle.ConstantTimeCompare([]byte(token), []byte(apiKey)) == 1
}
