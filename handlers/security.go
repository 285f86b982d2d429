package handlers

import "net/http"

// SecurityHeaders are the upstream security headers of provider responses
// (wire.md §8); the SSE stream carries none of them.
var SecurityHeaders = [][2]string{
	{"Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"},
	{"Permissions-Policy", "camera=(), microphone=(), geolocation=()"},
	{"Strict-Transport-Security", "max-age=31536000; includeSubDomains"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"X-Xss-Protection", "0"},
	{"Referrer-Policy", "no-referrer"},
}

// securityHeaderValues holds SecurityHeaders as header values, built once.
var securityHeaderValues = func() [][]string {
	vs := make([][]string, len(SecurityHeaders))
	for i, sh := range SecurityHeaders {
		vs[i] = []string{sh[1]}
	}
	return vs
}()

// SetSecurityHeaders sets SecurityHeaders on h. The names are canonical
// already and the values are shared (net/http never writes into a value), so
// a response pays neither canonicalisation nor an allocation for them.
func SetSecurityHeaders(h http.Header) {
	for i, sh := range SecurityHeaders {
		h[sh[0]] = securityHeaderValues[i]
	}
}
