package main

// Citations of the behaviour specification (docs/spec): comments, tests and
// clients cite it by section — `runs-api §6.1`, `controls.md §8.6`,
// `hardening H5`, `acceptance 37`, a test named TestC37… — and each citation
// must name a heading (or an acceptance item) that exists there. How a
// citation maps to a heading is written in docs/spec/README.md; this file is
// that mapping as code.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// SpecDocs are the documents of the specification that citations name, by
// the name a citation uses (the file is the name + ".md").
var SpecDocs = []string{"runs-api", "controls", "wire", "scenarios", "hardening", "acceptance"}

// A Spec is what the specification's headings define: for each document the
// section ids of its headings ("6.1", "H5", and the letters "A"…"O" of the
// acceptance sections), and the acceptance items with their section letter.
type Spec struct {
	Dir      string                     // the folder, as given (for messages)
	sections map[string][]string        // doc → ids in heading order
	has      map[string]map[string]bool // doc → id → true
	items    map[int]string             // acceptance item number → its section letter
}

var (
	numberedHeading = regexp.MustCompile(`^(\d+(?:\.\d+)*)\.?(?:\s|$)`)
	hardHeading     = regexp.MustCompile(`^(H\d+)\b`)
	letterHeading   = regexp.MustCompile(`^([A-Z])\.\s`)
	acceptanceItem  = regexp.MustCompile(`^\s*[-*]\s+(?:<a\s+id="[^"]*"></a>)?\*\*([A-Z])(\d+)\.\*\*`)
)

// LoadSpec reads the specification's documents from dir (relative to root
// or absolute).
func LoadSpec(root, dir string) (*Spec, error) {
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, dir)
	}
	s := &Spec{Dir: dir, sections: map[string][]string{}, has: map[string]map[string]bool{}, items: map[int]string{}}
	for _, doc := range SpecDocs {
		data, err := os.ReadFile(filepath.Join(abs, doc+".md"))
		if err != nil {
			return nil, err
		}
		s.has[doc] = map[string]bool{}
		for _, line := range prose(string(data)) {
			if m := acceptanceItem.FindStringSubmatch(line); m != nil && doc == "acceptance" {
				n, _ := strconv.Atoi(m[2])
				s.items[n] = m[1]
				continue
			}
			if !strings.HasPrefix(line, "#") {
				continue
			}
			title := strings.TrimLeft(line, "#")
			if title == "" || title[0] != ' ' {
				continue
			}
			title = strings.TrimSpace(title)
			id := ""
			if m := numberedHeading.FindStringSubmatch(title); m != nil {
				id = m[1]
			} else if m := hardHeading.FindStringSubmatch(title); m != nil {
				id = m[1]
			} else if m := letterHeading.FindStringSubmatch(title); m != nil {
				id = m[1]
			}
			if id != "" && !s.has[doc][id] {
				s.has[doc][id] = true
				s.sections[doc] = append(s.sections[doc], id)
			}
		}
	}
	return s, nil
}

var (
	// citeToken finds, in order, the four kinds of token a citation is made
	// of: a document name, a section sign with its number, a hardening id, and
	// a test named after acceptance items.
	citeToken = regexp.MustCompile(`\b(runs-api|controls|wire|scenarios|hardening|acceptance|Acceptance)(?:\.md)?\b` +
		`|§ ?(\d+(?:\.\d+)*)(?:\s*[–-]\s*§? ?(\d+(?:\.\d+)*))?` +
		`|\bH(\d{1,2})\b` +
		`|\bTest([A-O])(\d{1,3})((?:(?:to|[A-O])\d{1,3})*)(?:[A-Z][a-z]|_|\b)`)
	// acceptanceRest reads what follows the word "acceptance": an optional
	// section letter, then item numbers with lists and ranges.
	acceptanceRest = regexp.MustCompile(`^(?:\.md)?(?:\s+section)?(?:\s+([A-O])\b,?)?(?:\s+items?)?\s+(\d{1,3}\b(?:\s*(?:,|and|–|-|to)\s*\d{1,3}\b)*)?`)
	itemsNear      = regexp.MustCompile(`^[^§\n]{0,60}?\bitems?\s+(\d{1,3}\b(?:\s*(?:,|and|–|-|to)\s*\d{1,3}\b)*)`)
	itemNumber     = regexp.MustCompile(`\d+|–|-|to`)
	testItem       = regexp.MustCompile(`(to|[A-O])(\d{1,3})`)
)

// Cite returns a description of every citation of text (the content of the
// file at path, relative to the repository root) that names no heading of
// the specification. In a file of the specification a bare §N is a section
// of that file; elsewhere it is a section of the document the file last
// cited by name.
func (s *Spec) Cite(path, text string) []string {
	own := ""
	if filepath.Clean(filepath.Dir(path)) == filepath.Clean(s.Dir) {
		own = strings.TrimSuffix(filepath.Base(path), ".md")
		if _, ok := s.has[own]; !ok {
			own = ""
		}
	}
	var problems []string
	report := func(at int, cite, msg string) {
		line := 1 + strings.Count(text[:at], "\n")
		problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", path, line, cite, msg))
	}
	last := ""                 // the document this file last cited by name
	prevEnd, prevDoc := -1, "" // the previous section citation, for chains
	for _, m := range citeToken.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[0], m[1]
		switch {
		case m[2] >= 0: // a document name
			doc := strings.ToLower(text[m[2]:m[3]])
			if doc == "acceptance" {
				s.citeAcceptance(text, m[3], report)
			}
		case m[4] >= 0: // § and a number
			doc, ok := "", true
			word, at := wordBefore(text, start)
			switch {
			case isDoc(word):
				doc = strings.TrimSuffix(strings.ToLower(word), ".md")
				if dir := pathBefore(text, at); dir != "" && !s.isDir(path, dir) {
					// A page of the same name elsewhere (the user page docs/scenarios.md) is not the spec.
					report(start, dir+"/"+word+" "+strings.TrimSpace(text[start:end]), dir+"/"+word+" is not the specification: cite it as "+doc+" "+strings.TrimSpace(text[start:end])+" ("+s.file(doc)+")")
					prevEnd, prevDoc = end, doc
					continue
				}
				last = doc
			case prevEnd >= 0 && chained(text[prevEnd:start]):
				doc = prevDoc
			case !foreign(word):
				doc = own
				if doc == "" {
					doc = last
				}
			default:
				ok = false // §N of another text
			}
			if !ok {
				continue
			}
			cite := text[start:end]
			if doc == "" {
				c := strings.TrimSpace(cite)
				report(start, c, "cites no document of "+s.Dir+": write \"runs-api "+c+"\" (or controls, wire, scenarios "+c+")")
				continue
			}
			for _, id := range []string{text[m[4]:m[5]], sub(text, m[6], m[7])} {
				if id != "" && !s.has[doc][id] {
					report(start, doc+" "+strings.TrimSpace(cite), "no heading §"+id+" in "+s.file(doc)+" ("+s.near(doc, id)+")")
				}
			}
			prevEnd, prevDoc = end, doc
		case m[8] >= 0: // H and a number
			if strings.HasSuffix(text[:start], "**") {
				continue // **H99.**: an acceptance item of section H
			}
			id := "H" + text[m[8]:m[9]]
			if !s.has["hardening"][id] {
				report(start, id, "no heading "+id+" in "+s.file("hardening")+" (it has "+strings.Join(s.sections["hardening"], ", ")+")")
			}
		case m[10] >= 0: // TestC37…
			letter := text[m[10]:m[11]]
			name := "Test" + letter + text[m[12]:m[13]] + text[m[14]:m[15]]
			s.checkItem(start, name, letter, text[m[12]:m[13]], report)
			for _, t := range testItem.FindAllStringSubmatch(text[m[14]:m[15]], -1) {
				if t[1] != "to" {
					letter = t[1]
				}
				s.checkItem(start, name, letter, t[2], report)
			}
		}
	}
	return problems
}

// IgnoreMark, anywhere in a file, exempts it from the citation check: for a
// file that holds wrong citations on purpose (this tool's tests).
const IgnoreMark = "doclinks:" + "ignore-citations"

// CiteFile is Cite of the file at path (relative to root or absolute); a
// binary file (one with a NUL byte) and a file with IgnoreMark cite nothing.
func (s *Spec) CiteFile(root, path string) ([]string, error) {
	file := path
	if !filepath.IsAbs(file) {
		file = filepath.Join(root, path)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(data, 0) >= 0 || bytes.Contains(data, []byte(IgnoreMark)) {
		return nil, nil
	}
	return s.Cite(path, string(data)), nil
}

// citeAcceptance checks the section letter and item numbers that follow the
// word "acceptance" ending at at: "acceptance 37", "acceptance 6–9",
// "acceptance.md I, items 120–135", "Acceptance section A (…, items 1–21)".
func (s *Spec) citeAcceptance(text string, at int, report func(int, string, string)) {
	rest := text[at:]
	m := acceptanceRest.FindStringSubmatchIndex(rest)
	if m == nil {
		return
	}
	if m[2] >= 0 {
		letter := rest[m[2]:m[3]]
		if !s.has["acceptance"][letter] {
			report(at, "acceptance "+letter, "no section "+letter+" in "+s.file("acceptance")+" (it has "+strings.Join(s.sections["acceptance"], ", ")+")")
		}
	}
	list := ""
	if m[4] >= 0 {
		list = rest[m[4]:m[5]]
	} else if n := itemsNear.FindStringSubmatch(rest[m[1]:]); n != nil {
		list = n[1]
	}
	for _, tok := range itemNumber.FindAllString(list, -1) {
		n, err := strconv.Atoi(tok)
		if err != nil {
			continue // a range's dash: both ends are checked
		}
		if _, ok := s.items[n]; !ok {
			report(at, "acceptance "+tok, "no item "+tok+" in "+s.file("acceptance")+" (items "+s.itemSpan()+")")
		}
	}
}

// checkItem reports a test name whose item number is not an item of the
// section its letter names.
func (s *Spec) checkItem(at int, name, letter, number string, report func(int, string, string)) {
	n, _ := strconv.Atoi(number)
	got, ok := s.items[n]
	switch {
	case !ok:
		report(at, name, "no item "+strconv.Itoa(n)+" in "+s.file("acceptance")+" (items "+s.itemSpan()+")")
	case got != letter:
		report(at, name, fmt.Sprintf("item %d is %s%d, in section %s of %s, not %s%d", n, got, n, got, s.file("acceptance"), letter, n))
	}
}

func (s *Spec) file(doc string) string { return filepath.ToSlash(filepath.Join(s.Dir, doc+".md")) }

// near lists the headings a reader would look among for id: its siblings
// under the same parent, or the top-level sections when the parent is not
// there either.
func (s *Spec) near(doc, id string) string {
	parent := ""
	if i := strings.LastIndex(id, "."); i >= 0 && s.has[doc][id[:i]] {
		parent = id[:i]
	}
	var ids []string
	for _, h := range s.sections[doc] {
		p := ""
		if i := strings.LastIndex(h, "."); i >= 0 {
			p = h[:i]
		}
		if p == parent {
			ids = append(ids, "§"+h)
		}
	}
	if parent != "" && len(ids) == 0 {
		return "§" + parent + " has no numbered subsections"
	}
	if parent != "" {
		return "§" + parent + " has " + strings.Join(ids, ", ")
	}
	return "it has " + strings.Join(ids, ", ")
}

func (s *Spec) itemSpan() string {
	if len(s.items) == 0 {
		return "none"
	}
	ns := make([]int, 0, len(s.items))
	for n := range s.items {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return fmt.Sprintf("%d–%d", ns[0], ns[len(ns)-1])
}

// foreign reports whether word, right before a bare §, names another text
// than the specification: a number or a name in capitals ("RFC 9110 §5.6.2",
// "STYLE §13") or another Markdown page ("api.md §3").
func foreign(word string) bool {
	if word == "" {
		return false
	}
	if strings.HasSuffix(word, ".md") || strings.Trim(word, "0123456789") == "" {
		return true
	}
	return strings.ToUpper(word) == word
}

func isDoc(word string) bool {
	w := strings.TrimSuffix(strings.ToLower(word), ".md")
	for _, d := range SpecDocs {
		if w == d {
			return true
		}
	}
	return false
}

func sub(text string, i, j int) string {
	if i < 0 {
		return ""
	}
	return text[i:j]
}

// isDir reports whether dir, the folder a citation names before a document
// ("docs/spec" in "docs/spec/runs-api.md §6"), is the specification's folder,
// from the repository root or from the citing file's folder.
func (s *Spec) isDir(path, dir string) bool {
	want := filepath.Clean(s.Dir)
	return filepath.Clean(dir) == want || filepath.Clean(filepath.Join(filepath.Dir(path), dir)) == want
}

// pathBefore returns the folder written right before a document name that
// starts at at ("docs" in "docs/scenarios.md"), or "".
func pathBefore(text string, at int) string {
	if at == 0 || text[at-1] != '/' {
		return ""
	}
	i := at - 1
	for i > 0 {
		c := text[i-1]
		if c == '/' || c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			i--
			continue
		}
		break
	}
	return text[i : at-1]
}

// wordBefore returns the word that ends right before at, across spaces,
// line breaks and comment leaders, and where it starts: "runs-api" in
// "(runs-api §6.1" and in "(runs-api\n// §6.1"; "" when a punctuation mark
// comes first.
func wordBefore(text string, at int) (string, int) {
	i := at
	for i > 0 {
		c := text[i-1]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '/' || c == '#' || c == '*' || c == '>' {
			i--
			continue
		}
		if c == '-' && i > 1 && text[i-2] == '-' {
			i -= 2
			continue
		}
		break
	}
	j := i
	for j > 0 {
		c := text[j-1]
		if c == '-' || c == '.' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			j--
			continue
		}
		break
	}
	word := strings.TrimLeft(text[j:i], ".")
	return strings.TrimRight(word, "."), i - len(word)
}

// chained reports whether between, the text between two section citations,
// only joins them ("runs-api §6.1, §7", "§14.1 and §14.2").
var chain = regexp.MustCompile(`^(?:\s|//|#|\*|--|>)*(?:,|;|and|or|/)?(?:\s|//|#|\*|--|>)*$`)

func chained(between string) bool { return chain.MatchString(between) }
