package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestSlug(t *testing.T) {
	tests := []struct{ title, want string }{
		{"Options", "options"},
		{" Submit a run — `POST /v1/runs`", "submit-a-run--post-v1runs"},
		{"Timeline: checkpoints and branches", "timeline-checkpoints-and-branches"},
		{"Go back with `x-mockingbird-at`", "go-back-with-x-mockingbird-at"},
		{"See [api.md](api.md) first", "see-apimd-first"},
		{"snake_case and 3.14", "snake_case-and-314"},
		{"Café <em>déjà</em>", "café-déjà"},
	}
	for _, tc := range tests {
		if got := Slug(tc.title); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.title, got, tc.want)
		}
	}
}

func TestLinks(t *testing.T) {
	text := "See [a](a.md) and [b](docs/b.md#x \"title\").\n" +
		"`[not](code.md)` but [c](<c d.md>)\n" +
		"```\n[fenced](no.md)\n```\n" +
		"[ref]: ref.md\n" +
		"[fn(x)](f(x).md) [web](https://example.com)\n"
	want := []Link{{1, "a.md"}, {1, "docs/b.md#x"}, {2, "c d.md"}, {6, "ref.md"}, {7, "f(x).md"}, {7, "https://example.com"}}
	if got := Links(text); !reflect.DeepEqual(got, want) {
		t.Fatalf("Links = %v, want %v", got, want)
	}
}

func TestAnchors(t *testing.T) {
	text := "# Title\n## Errors\n### Errors\n```\n# not a heading\n```\n#nospace\n<a id=\"kept\"></a>text\n"
	want := map[string]bool{"title": true, "errors": true, "errors-1": true, "kept": true}
	if got := Anchors(text); !reflect.DeepEqual(got, want) {
		t.Fatalf("Anchors = %v, want %v", got, want)
	}
}

// Every kind of broken link is reported with its line; good ones are not.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/api.md", "# API\n## Errors\n")
	write("go.mod", "module x\n")
	write("README.md", "[ok](docs/api.md) [ok](docs/api.md#errors) [ok](docs) [ok](go.mod) [ok](#readme) [web](https://x.test/y)\n"+
		"# Readme\n"+
		"[missing](docs/nope.md)\n"+
		"[outside](../elsewhere/spec.md)\n"+
		"[anchor](docs/api.md#nope)\n"+
		"[self](#nope)\n"+
		"[abs](/docs/api.md)\n"+
		"[empty]()\n")
	got, err := Check(root, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:3: docs/nope.md: no such file or folder in the repository",
		"README.md:4: ../elsewhere/spec.md: points outside the repository",
		"README.md:5: docs/api.md#nope: no heading or anchor #nope in docs/api.md",
		"README.md:6: #nope: no heading or anchor #nope in this page",
		"README.md:7: /docs/api.md: absolute path: write it relative to this page",
		"README.md:8: : empty link",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Check:\n got %q\nwant %q", got, want)
	}
	if _, err := Check(root, "absent.md"); err == nil {
		t.Fatal("Check of a missing file: no error")
	}
}

// An index page must link every other page of its folder; a fragment or a
// ./ prefix still counts, a page of another folder does not.
func TestUnindexed(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"docs/README.md": "[a](a.md) [b](./b.md#x) [up](../c.md) `[d](d.md)`\n",
		"docs/a.md":      "", "docs/b.md": "", "docs/d.md": "", "docs/e.md": "", "c.md": "", "docs/sub/f.md": "",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Unindexed(root, "docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"d.md", "e.md"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Unindexed = %q, want %q", got, want)
	}
	if _, err := Unindexed(root, "absent/README.md"); err == nil {
		t.Fatal("Unindexed of a missing index: no error")
	}
}

// The repository's own pages: every relative link of README.md, docs/ and
// docs/spec/ resolves inside the repository (issues 15, 35), and
// docs/README.md links every page of docs/.
func TestRepositoryDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("docs/ has %d pages, want at least 5", len(files))
	}
	missing, err := Unindexed(root, filepath.Join("docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range missing {
		t.Errorf("docs/README.md: no link to %s, a page of its folder", page)
	}
	spec, err := filepath.Glob(filepath.Join(root, "docs", "spec", "*.md"))
	if err != nil || len(spec) < 7 {
		t.Fatalf("docs/spec has %d pages (%v), want the README and the six documents", len(spec), err)
	}
	files = append(files, spec...)
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "SUPPORT.md"))
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		problems, err := Check(root, rel)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}
