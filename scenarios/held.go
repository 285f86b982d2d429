package scenarios

import (
	"regexp/syntax"
	"strconv"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// MaxHeldBytes bounds what the scenario sets of all namespaces hold together:
// the --scenarios default once, and every namespace's own set, as a set's
// weight estimates it (below). A client that fills --max-namespaces
// namespaces with sets pins at most this much memory, not 10,000 sets of a
// 10 MB body each.
const MaxHeldBytes = 256 << 20

// msgHeld is the 409 of a set that would take all namespaces' sets past
// MaxHeldBytes; nothing changes.
var msgHeld = "scenario sets too large in all namespaces (max " + strconv.Itoa(MaxHeldBytes) + " bytes)"

func errHeld() *runs.Error { return runs.Admin(409, msgHeld) }

// What a parsed set holds on the heap, by what it is made of: upper bounds
// measured with runtime.MemStats on the worst shapes (held_test.go,
// TestWeightBoundsHeap, logs each shape's heap bytes and weight):
//
//   - valueBytes a JSON value (a runs.Value, 80 bytes, and an object's Obj,
//     48, in arrays that the allocator rounds up to its size classes): 128 a
//     value for an array of empty objects, 140 in arrays of 103 of them;
//   - 1 a byte of a string, a key or a number's lexeme;
//   - stepBytes a step given in the file (the Step and the control body built
//     around an approval or events): 1M values in steps of
//     {"after":0,"approval":{}} held 245 bytes a value, 116 of them left
//     beyond valueBytes once each step counts stepBytes;
//   - scenarioBytes a scenario (its record and its default if_denied and
//     on_stop lists): 1570 measured;
//   - a regular expression: regexpBytes (the compiled Regexp: ~1050 for ^a$),
//     plus instBytes an instruction of its program (40 bytes and the slice's
//     spare capacity: 45–48 a byte of a long literal, which compiles to an
//     instruction a character), plus nodeBytes a parse node the instructions
//     keep (a character class, a literal of one or two characters: 156 an
//     instruction of [a-z][a-z]…), plus 4 a character a node of more than two
//     keeps room for (\pL: about 1,300), plus onePassBytes an instruction and 8 a
//     character it lists when regexp may keep a one-pass copy, which has its
//     own runes and a next-instruction table (126 an instruction for
//     ^<literal of 900 bytes>$, a recorded input; 6.2 a character for ^\pL{900}$).
//
// A YAML alias counts as what it expands to, as maxValues counts it.
const (
	valueBytes    = 144
	stepBytes     = 384
	scenarioBytes = 2048
	regexpBytes   = 1024
	instBytes     = 64
	nodeBytes     = 128
	onePassBytes  = 96
)

// weight is a set's estimate while it is parsed: its values (at most
// maxValues) and the bytes it holds so far.
type weight struct {
	values int
	bytes  int64
}

// value adds v, every value inside it and their strings, keys and number
// lexemes; false once the set has more than maxValues values (stop there: a
// YAML file can expand to many more).
func (w *weight) value(v runs.Value) bool {
	if w.values++; w.values > maxValues {
		return false
	}
	w.bytes += valueBytes + int64(len(v.Str)+len(v.Int))
	for _, el := range v.Arr {
		if !w.value(el) {
			return false
		}
	}
	if v.Kind == runs.Object {
		for i, el := range v.Obj.Vals {
			w.bytes += int64(len(v.Obj.Keys[i]))
			if !w.value(el) {
				return false
			}
		}
	}
	return true
}

// over reports whether the set alone holds more than all namespaces may.
func (w *weight) over() bool { return w.bytes > MaxHeldBytes }

// regexp adds what expr compiles to (regexp.Compile accepted it): its
// program as regexp.Compile builds it (regexp/syntax: parse, simplify,
// compile), instruction by instruction. An instruction's runes point into
// the parse node they came from, which then stays: a node counts once, at the
// first instruction that points into it — not again for the next character
// of the same literal, nor for a copy a repetition made of the same node.
func (w *weight) regexp(expr string) {
	w.bytes += regexpBytes
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return
	}
	// regexp keeps a one-pass copy of a program anchored at the start of
	// the text that has fewer than 1000 instructions, when the program
	// allows it (regexp's compileOnePass): counted whenever it could.
	first := prog.Inst[prog.Start]
	onePass := len(prog.Inst) < 1000 && first.Op == syntax.InstEmptyWidth && syntax.EmptyOp(first.Arg)&syntax.EmptyBeginText != 0
	nodes := map[*rune]bool{}
	var prev []rune
	for i := range prog.Inst {
		r := prog.Inst[i].Rune
		w.bytes += instBytes
		if onePass {
			w.bytes += onePassBytes + 8*int64(len(r))
		}
		if len(r) == 0 {
			continue
		}
		if next := len(prev) == 1 && cap(prev) > 1 && &prev[:2][1] == &r[0]; !next && !nodes[&r[0]] {
			nodes[&r[0]] = true
			w.bytes += nodeBytes
			if cap(r) > 2 { // not in the node: an array of their own
				w.bytes += 4 * int64(cap(r))
			}
		}
		prev = r
	}
}

// held is what s holds, estimated (0 for nil).
func (s *Set) held() int64 {
	if s == nil {
		return 0
	}
	return s.heldBytes
}
