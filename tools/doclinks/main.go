// Command doclinks checks that every relative link in Markdown files resolves
// inside the repository: the file (or folder) exists, the path does not leave
// the repository, and a #fragment names a heading (GitHub's anchor rules) or an
// <a id="…"> of the target page. Links with a scheme (https:, mailto:) are not
// fetched.
//
//	go run ./tools/doclinks [-root DIR] [-index docs/README.md] [-spec docs/spec] FILE…
//
// With -index, the index page must also link every other Markdown page of its
// folder (a page nobody can find from the index is a broken link too).
//
// With -spec, every FILE (Markdown or not: code, tests, contracts, clients) is
// also read for citations of the behaviour specification in that folder —
// `runs-api §6.1`, `controls.md §8.6`, a bare `§7` after one of those,
// `hardening H5`, `acceptance 37`, a test named TestC37… — and each must name
// a heading or acceptance item that exists (cite.go; docs/spec/README.md says
// how citations map to headings). Links are checked in the .md files only.
//
// It prints one line per problem (file:line, the link or citation, why) and
// exits 1 when there is any; scripts/check runs it over every tracked file,
// with the docs/README.md index and the docs/spec specification.
package main

import (
	"flag"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

func main() {
	root := flag.String("root", ".", "repository root: no link may point outside it")
	index := flag.String("index", "", "an index page that must link every other .md page of its folder")
	specDir := flag.String("spec", "", "the specification's folder: check the citations of every file against its headings")
	flag.Parse()
	var spec *Spec
	if *specDir != "" {
		var err error
		if spec, err = LoadSpec(*root, *specDir); err != nil {
			fmt.Fprintf(os.Stderr, "doclinks: %v\n", err)
			os.Exit(2)
		}
	}
	bad := 0
	if *index != "" {
		missing, err := Unindexed(*root, *index)
		if err != nil {
			fmt.Fprintf(os.Stderr, "doclinks: %v\n", err)
			os.Exit(2)
		}
		for _, page := range missing {
			fmt.Fprintf(os.Stderr, "%s: no link to %s, a page of its folder\n", *index, page)
		}
		bad += len(missing)
	}
	for _, f := range flag.Args() {
		var problems []string
		if strings.HasSuffix(f, ".md") {
			p, err := Check(*root, f)
			if err != nil {
				fmt.Fprintf(os.Stderr, "doclinks: %v\n", err)
				os.Exit(2)
			}
			problems = p
		}
		if spec != nil {
			p, err := spec.CiteFile(*root, f)
			if err != nil {
				fmt.Fprintf(os.Stderr, "doclinks: %v\n", err)
				os.Exit(2)
			}
			problems = append(problems, p...)
		}
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p)
		}
		bad += len(problems)
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "doclinks: %d broken link(s), unindexed page(s) or unresolved citation(s)\n", bad)
		os.Exit(1)
	}
}

// A Link is one link target found in a Markdown file, with its line number.
type Link struct {
	Line   int
	Target string
}

var (
	inlineLink = regexp.MustCompile(`\]\((?:<([^<>]+)>|([^()\s]*(?:\([^()\s]*\)[^()\s]*)*))(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*(\S+)`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
)

// Links returns the link targets of a Markdown text, skipping fenced code
// blocks and inline code spans.
func Links(text string) []Link {
	var out []Link
	for n, line := range prose(text) {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, Link{n, m[1] + m[2]}) // <target> or target
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, Link{n, m[1]})
		}
	}
	return out
}

// prose yields the lines of a Markdown text outside fenced code blocks (``` or
// ~~~), with their 1-based line numbers.
func prose(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fence := ""
		for i, line := range strings.Split(text, "\n") {
			trimmed := strings.TrimSpace(line)
			if fence != "" {
				if strings.HasPrefix(trimmed, fence) {
					fence = ""
				}
				continue
			}
			if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
				fence = trimmed[:3]
				continue
			}
			if !yield(i+1, line) {
				return
			}
		}
	}
}

// Anchors returns the fragment names a Markdown page defines: one per heading,
// made the way GitHub makes them (lowercase; letters, digits, spaces, '-' and
// '_' kept, other characters dropped; spaces become '-'; a repeated anchor
// gets -1, -2, …), plus every <a id="…"> or <a name="…">.
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if title == "" || title[0] != ' ' {
			continue
		}
		slug := Slug(title)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

var (
	mdLink  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	htmlTag = regexp.MustCompile(`<[^>]+>`)
)

// Slug is GitHub's anchor for a heading's text.
func Slug(title string) string {
	title = mdLink.ReplaceAllString(title, "$1")
	title = htmlTag.ReplaceAllString(title, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Check returns a description of every broken relative link of the Markdown
// file path (relative to root or absolute).
func Check(root, path string) ([]string, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	file := path
	if !filepath.IsAbs(file) {
		file = filepath.Join(absRoot, path)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, l := range Links(string(data)) {
		if msg := checkLink(absRoot, file, string(data), l.Target); msg != "" {
			problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", path, l.Line, l.Target, msg))
		}
	}
	return problems, nil
}

var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// checkLink returns why target, a link of the file at path with content text,
// does not resolve, or "".
func checkLink(root, path, text, target string) string {
	if target == "" {
		return "empty link"
	}
	if scheme.MatchString(target) {
		return ""
	}
	target, frag, _ := strings.Cut(target, "#")
	if target == "" {
		if !Anchors(text)[frag] {
			return "no heading or anchor #" + frag + " in this page"
		}
		return ""
	}
	if strings.HasPrefix(target, "/") {
		return "absolute path: write it relative to this page"
	}
	dest := filepath.Clean(filepath.Join(filepath.Dir(path), filepath.FromSlash(target)))
	rel, err := filepath.Rel(root, dest)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "points outside the repository"
	}
	info, err := os.Stat(dest)
	if err != nil {
		return "no such file or folder in the repository"
	}
	if frag == "" || info.IsDir() || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	data, err := os.ReadFile(dest)
	if err != nil {
		return err.Error()
	}
	if !Anchors(string(data))[frag] {
		return "no heading or anchor #" + frag + " in " + target
	}
	return ""
}

// Unindexed returns the names of the Markdown pages in the folder of the index
// page (relative to root or absolute) that the index does not link to, sorted.
// A link counts whatever its #fragment.
func Unindexed(root, index string) ([]string, error) {
	file := index
	if !filepath.IsAbs(file) {
		file = filepath.Join(root, index)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(file)
	linked := map[string]bool{}
	for _, l := range Links(string(data)) {
		target, _, _ := strings.Cut(l.Target, "#")
		if target != "" && !scheme.MatchString(target) {
			linked[filepath.Clean(filepath.Join(dir, filepath.FromSlash(target)))] = true
		}
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, p := range pages { // Glob sorts
		if p != filepath.Clean(file) && !linked[p] {
			missing = append(missing, filepath.Base(p))
		}
	}
	return missing, nil
}
