package scenarios

import (
	"regexp/syntax"
	"strconv"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// What the scenario sets of all namespaces — the --scenarios default once, and
// every namespace's own set — hold together is bounded by two counts
// (docs/security.md states the memory they allow):
//
//   - MaxHeldValues JSON values: every array, object, string, number, boolean
//     and null of the sets, counted as one set's are (maxValues; a YAML alias
//     as what it expands to);
//   - MaxHeldRegexpSize units of compiled regular expressions
//     (match.input, match.session_id): each counts its size, regexpSize.
const (
	MaxHeldValues     = 1_000_000
	MaxHeldRegexpSize = 1_000_000
)

// The 409s of a set that would take all namespaces' sets past a bound;
// nothing changes.
var (
	msgHeldValues = "scenario sets hold more than " + strconv.Itoa(MaxHeldValues) + " values in all namespaces"
	msgHeldRegexp = "scenario sets' regular expressions compile to more than " + strconv.Itoa(MaxHeldRegexpSize) + " instructions in all namespaces"
)

// count adds v and every value inside it to *n; false once *n passes
// maxValues (stop there: a YAML file can expand to many more).
func count(v runs.Value, n *int) bool {
	if *n++; *n > maxValues {
		return false
	}
	for _, el := range v.Arr {
		if !count(el, n) {
			return false
		}
	}
	if v.Kind == runs.Object {
		for _, el := range v.Obj.Vals {
			if !count(el, n) {
				return false
			}
		}
	}
	return true
}

// regexpSize is the size of expr compiled (regexp.Compile accepted it): the
// instructions of its program plus the runes they list, the program as
// regexp/syntax builds it (Parse with syntax.Perl, Simplify, Compile). A
// literal character is an instruction and a rune; a{1000} a thousand of each;
// [a-z] an instruction and two runes (the range's ends).
func regexpSize(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0
	}
	n := len(prog.Inst)
	for _, inst := range prog.Inst {
		n += len(inst.Rune)
	}
	return n
}

// held is what s counts against the bounds (0, 0 for nil).
func (s *Set) held() (values, regexpSize int) {
	if s == nil {
		return 0, 0
	}
	return s.values, s.regexpSize
}
