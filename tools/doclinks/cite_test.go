// The fixtures below hold wrong citations on purpose: doclinks:ignore-citations.
package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// miniSpec writes a small specification under root/docs/spec and loads it.
func miniSpec(t *testing.T) (root string, s *Spec) {
	t.Helper()
	root = t.TempDir()
	files := map[string]string{
		"runs-api.md":   "# Runs\n## 3. Pipeline\n## 6. Operations\n### 6.1 RunCreate\n### 6.2 RunGet\n## 7. Idempotency\n```\n## 9. not a heading\n```\n",
		"controls.md":   "# Controls\n## 1. Common rules\n## 11. Hermes controls\n### 11.1 Observe\n",
		"wire.md":       "# Wire\n## 7. SSE frames\n",
		"scenarios.md":  "# Scenarios\n## 2. Time\n",
		"hardening.md":  "# Hardening\n## H1 — history headers\n## H5 — bounded memory\n",
		"acceptance.md": "# Acceptance\n## A. Admission\n- <a id=\"a1\"></a>**A1.** one\n- **A2.** two\n## C. Idempotency\n- <a id=\"c37\"></a>**C37.** thirty-seven\n- **C38.** thirty-eight\n",
	}
	for name, text := range files {
		p := filepath.Join(root, "docs", "spec", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := LoadSpec(root, "docs/spec")
	if err != nil {
		t.Fatal(err)
	}
	return root, s
}

func TestLoadSpec(t *testing.T) {
	_, s := miniSpec(t)
	want := map[string][]string{
		"runs-api":   {"3", "6", "6.1", "6.2", "7"},
		"controls":   {"1", "11", "11.1"},
		"wire":       {"7"},
		"scenarios":  {"2"},
		"hardening":  {"H1", "H5"},
		"acceptance": {"A", "C"},
	}
	if !reflect.DeepEqual(s.sections, want) {
		t.Fatalf("sections = %v, want %v", s.sections, want)
	}
	if want := map[int]string{1: "A", 2: "A", 37: "C", 38: "C"}; !reflect.DeepEqual(s.items, want) {
		t.Fatalf("items = %v, want %v", s.items, want)
	}
	if _, err := LoadSpec(t.TempDir(), "docs/spec"); err == nil {
		t.Fatal("LoadSpec of a missing folder: no error")
	}
}

// Every form of citation resolves or is reported with its line, the
// citation and the headings there are; text that only looks like one (RFC
// sections, acceptance as a plain word, item ids of section H) is left alone.
func TestCite(t *testing.T) {
	_, s := miniSpec(t)
	tests := []struct {
		name, path, text string
		want             []string
	}{
		{"good forms", "x.go", "// runs-api §6.1 step 14, controls.md §11.1, wire.md §7 and scenarios §2\n" +
			"// (runs-api\n// §6.1, §7) then §6.2 and (§3)\n# controls §1 \"Body\"\n-- runs-api.md §6.2–6.1\n" +
			"// hardening H5, H1–H5, (H1)\n// acceptance 37, acceptance 1–2, acceptance 37 and 38, acceptance.md C, items 37–38\n" +
			"func TestC37Concurrent(t *testing.T) {}\nfunc TestA01to02Bodies() {}\nfunc TestC37C38Keys() {}\n" +
			"// docs/spec/runs-api.md §7\n", nil},
		{"a path relative to the citing file", "docs/x.md", "spec/runs-api.md §7, then §6.1\n", nil},
		{"foreign sections and words", "x.go", "// RFC 9110 §5.6.2, STYLE §13, api.md §3; the acceptance tests; acceptance.md: 1700000000000\n" +
			"// **H99.** is an item; TestE2EFlow and TestCase are other tests; H264 is a codec\n", nil},
		{"missing sections", "x.go", "// runs-api §6.9\n// see controls §12 and §11.4\n// runs-api §4.2–4.3\n", []string{
			"x.go:1: runs-api §6.9: no heading §6.9 in docs/spec/runs-api.md (§6 has §6.1, §6.2)",
			"x.go:2: controls §12: no heading §12 in docs/spec/controls.md (it has §1, §11)",
			"x.go:2: controls §11.4: no heading §11.4 in docs/spec/controls.md (§11 has §11.1)",
			"x.go:3: runs-api §4.2–4.3: no heading §4.2 in docs/spec/runs-api.md (it has §3, §6, §7)",
			"x.go:3: runs-api §4.2–4.3: no heading §4.3 in docs/spec/runs-api.md (it has §3, §6, §7)",
		}},
		{"a bare § with no document", "x.go", "// five subsets (§6.8)\n", []string{
			`x.go:1: §6.8: cites no document of docs/spec: write "runs-api §6.8" (or controls, wire, scenarios §6.8)`,
		}},
		{"a bare § follows the last document cited", "x.go", "// runs-api §3\n\n// later (§11.1)\n", []string{
			"x.go:3: runs-api §11.1: no heading §11.1 in docs/spec/runs-api.md (it has §3, §6, §7)",
		}},
		{"a page of the same name elsewhere", "x.go", "// docs/scenarios.md §2\n", []string{
			"x.go:1: docs/scenarios.md §2: docs/scenarios.md is not the specification: cite it as scenarios §2 (docs/spec/scenarios.md)",
		}},
		{"hardening", "x.go", "// hardening H9 and H0\n", []string{
			"x.go:1: H9: no heading H9 in docs/spec/hardening.md (it has H1, H5)",
			"x.go:1: H0: no heading H0 in docs/spec/hardening.md (it has H1, H5)",
		}},
		{"acceptance items", "x.go", "// acceptance 36, 37\n// acceptance 1–3\n// acceptance section B (items 1–2)\n", []string{
			"x.go:1: acceptance 36: no item 36 in docs/spec/acceptance.md (items 1–38)",
			"x.go:2: acceptance 3: no item 3 in docs/spec/acceptance.md (items 1–38)",
			"x.go:3: acceptance B: no section B in docs/spec/acceptance.md (it has A, C)",
		}},
		{"tests named after items", "x_test.go", "func TestC1Keys(t *testing.T) {}\nfunc TestA37C39(t *testing.T) {}\n", []string{
			"x_test.go:1: TestC1: item 1 is A1, in section A of docs/spec/acceptance.md, not C1",
			"x_test.go:2: TestA37C39: item 37 is C37, in section C of docs/spec/acceptance.md, not A37",
			"x_test.go:2: TestA37C39: no item 39 in docs/spec/acceptance.md (items 1–38)",
		}},
		{"a bare § in the spec is its own file's", "docs/spec/controls.md", "See §11.1 and runs-api §6.1; then §6.1.\n", []string{
			"docs/spec/controls.md:1: controls §6.1: no heading §6.1 in docs/spec/controls.md (it has §1, §11)",
		}},
	}
	for _, tc := range tests {
		if got := s.Cite(tc.path, tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestCiteFile(t *testing.T) {
	root, s := miniSpec(t)
	if err := os.WriteFile(filepath.Join(root, "bin.png"), []byte("\x89PNG\x00 runs-api §99"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CiteFile(root, "bin.png"); err != nil || got != nil {
		t.Fatalf("CiteFile of a binary file = %q, %v; want nothing", got, err)
	}
	if err := os.WriteFile(filepath.Join(root, "x.go"), []byte("// runs-api §99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CiteFile(root, "x.go"); err != nil || len(got) != 1 {
		t.Fatalf("CiteFile of a wrong citation = %q, %v; want one problem", got, err)
	}
	if err := os.WriteFile(filepath.Join(root, "x.go"), []byte("// runs-api §99 "+IgnoreMark+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CiteFile(root, "x.go"); err != nil || got != nil {
		t.Fatalf("CiteFile of a file marked %s = %q, %v; want nothing", IgnoreMark, got, err)
	}
	if _, err := s.CiteFile(root, "absent.go"); err == nil {
		t.Fatal("CiteFile of a missing file: no error")
	}
}

// The repository's own citations (issue 35): every citation of docs/spec in
// code, tests, contracts, clients and docs names a heading that exists.
// scripts/check runs the same check over the tracked files.
func TestRepositoryCitations(t *testing.T) {
	root := filepath.Join("..", "..")
	s, err := LoadSpec(root, filepath.Join("docs", "spec"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin" || name == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		problems, err := s.CiteFile(root, rel)
		if err != nil {
			return err
		}
		for _, p := range problems {
			t.Error(p)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read %d files, want the whole repository", n)
	}
}
