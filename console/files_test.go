package console

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// stripComments removes the comments of an embedded file: /* … */ in CSS and
// JavaScript, whole-line // comments in JavaScript, <!-- … --> in HTML. Only
// whole-line // comments count, so "https://x" in code is never mistaken for
// a comment.
func stripComments(name, text string) string {
	switch path.Ext(name) {
	case ".css", ".js":
		text = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(text, "")
	case ".html":
		text = regexp.MustCompile(`(?s)<!--.*?-->`).ReplaceAllString(text, "")
	}
	if path.Ext(name) == ".js" {
		text = regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAllString(text, "")
	}
	return text
}

func embedded(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		out[strings.TrimPrefix(p, "static/")] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoExternalURL: nothing the console loads or calls is on another origin
// (no CDN): no http:// or https:// outside comments in any embedded file.
func TestNoExternalURL(t *testing.T) {
	url := regexp.MustCompile(`(?i)https?://`)
	for name, text := range embedded(t) {
		for i, line := range strings.Split(stripComments(name, text), "\n") {
			if url.MatchString(line) {
				t.Errorf("%s:%d references an external URL: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// TestStripComments: the comment stripper of TestNoExternalURL keeps URLs in
// code, so that test can fail.
func TestStripComments(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"a.js", "// see https://x\nfetch('https://cdn')", "\nfetch('https://cdn')"},
		{"a.js", "/* https://x */ a", " a"},
		{"a.css", "/* https://x */ a { background: url(https://cdn/x.png) }", " a { background: url(https://cdn/x.png) }"},
		{"a.html", "<!-- https://x --><script src=\"https://cdn\">", "<script src=\"https://cdn\">"},
	}
	for _, c := range cases {
		if got := stripComments(c.name, c.in); got != c.want {
			t.Errorf("stripComments(%q, %q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestEveryFileHasAType: an embedded file whose type the console does not
// know would never be served.
func TestEveryFileHasAType(t *testing.T) {
	for name := range embedded(t) {
		if _, ok := types[path.Ext(name)]; !ok {
			t.Errorf("embedded file %s has no Content-Type in types", name)
		}
	}
}

// TestReferencesResolve: every file index.html loads and every module a
// script imports is embedded.
func TestReferencesResolve(t *testing.T) {
	all := embedded(t)
	ref := regexp.MustCompile(`(?:src|href)="([^"#:]+)"|from '\./([^']+)'`)
	n := 0
	for name, text := range all {
		for _, m := range ref.FindAllStringSubmatch(stripComments(name, text), -1) {
			target := m[1] + m[2]
			n++
			if _, ok := all[target]; !ok {
				t.Errorf("%s references %s, which is not embedded", name, target)
			}
		}
	}
	if n < len(all)-1 { // every file but index.html is referenced at least once
		t.Errorf("found %d references in %d files: the pattern misses some", n, len(all))
	}
}
