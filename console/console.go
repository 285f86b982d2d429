// Package console is the emulator's browser console: a single page served at
// GET /__admin/ui/ from files embedded in the binary (no build step, nothing
// loaded from another origin). It shows what the emulator holds (runs,
// clock, faults, journal, timeline, scenarios), plays the agent through the
// Hermes controls and watches a run's events through the control-plane
// stream — all by calling /__admin like any other client (docs/console.md).
//
// The files hold no data, so they are served without the admin key (a
// browser cannot send a header when it navigates to a page); every call the
// page makes to /__admin carries x-mockingbird-admin-key, which the user
// enters once and the page keeps in its session storage.
package console

import (
	"embed"
	"net/http"
	"path"
	"strings"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

//go:embed static
var files embed.FS

// Prefix is the path of the console, relative to the server root (and to a
// /ns/<name> prefix).
const Prefix = "/__admin/ui"

// types are the Content-Types of the embedded files, by extension; a file
// with another extension is never served.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// policy is the Content-Security-Policy of every console answer: the page may
// load and call only its own origin, so a CDN reference would fail in the
// browser as it fails the tests.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// Owns reports whether rawPath (after /ns/<name> stripping) is the console's:
// /__admin/ui or anything under /__admin/ui/.
func Owns(rawPath string) bool {
	return rawPath == Prefix || strings.HasPrefix(rawPath, Prefix+"/")
}

// ServeHTTP answers a console request; rawPath is the request path after
// /ns/<name> stripping, and Owns(rawPath) holds.
//
//   - /__admin/ui → 301 to ui/ (relative, so a /ns/<name> prefix or a proxy's
//     prefix is kept), since the page loads its files by relative URL;
//   - /__admin/ui/ → index.html; /__admin/ui/<file> → that embedded file;
//   - any other path → 404, a method other than GET or HEAD → 405.
func ServeHTTP(w http.ResponseWriter, r *http.Request, rawPath string) {
	h := w.Header()
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "the console answers GET and HEAD only")
		return
	}
	name := strings.TrimPrefix(rawPath, Prefix)
	if name == "" {
		h.Set("Location", "ui/")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" {
		name = "index.html"
	}
	data, typ, ok := file(name)
	if !ok {
		plain(w, http.StatusNotFound, "no console file "+runs.Echo(name)) // H9: the echo is bounded
		return
	}
	h.Set("Content-Type", typ)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(data)
	}
}

// file returns an embedded file by its name under static/, with its
// Content-Type. Only plain names of a known type are looked up: no
// directories, no dot files.
func file(name string) ([]byte, string, bool) {
	typ, known := types[path.Ext(name)]
	if !known || strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		return nil, "", false
	}
	data, err := files.ReadFile("static/" + name)
	if err != nil {
		return nil, "", false
	}
	return data, typ, true
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}
