package record

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// writeFile renders a scenario file (scenarios.md §1): the header comment
// lines, then the scenarios as block YAML whose bodies are JSON flow values —
// JSON is YAML, so every body reads back the same under either parser.
func writeFile(header []string, ss []Scenario) []byte {
	var b bytes.Buffer
	for _, h := range header {
		b.WriteString("# " + oneLine(h) + "\n")
	}
	if len(ss) == 0 {
		b.WriteString("scenarios: []\n")
		return b.Bytes()
	}
	b.WriteString("scenarios:\n")
	for _, s := range ss {
		writeScenario(&b, s)
	}
	return b.Bytes()
}

// fit keeps the scenarios, in order, whose rendering fits in budget bytes
// altogether, and counts the others: the loader refuses a file over
// scenarios.MaxFileBytes, so a recording of many long outputs or deltas keeps
// what fits rather than write a file that does not load.
func fit(ss []Scenario, budget int) (kept []Scenario, left int) {
	size := 0
	for _, s := range ss {
		var b bytes.Buffer
		writeScenario(&b, s)
		if size+b.Len() > budget {
			left++
			continue
		}
		size += b.Len()
		kept = append(kept, s)
	}
	return kept, left
}

// writeScenario renders one scenario of the list, comments first.
func writeScenario(b *bytes.Buffer, s Scenario) {
	for _, c := range s.Comment {
		b.WriteString("  # " + oneLine(c) + "\n")
	}
	b.WriteString("  - name: " + quote(s.Name) + "\n")
	b.WriteString("    match: " + flow(runs.ObjectValue(s.Match)) + "\n")
	writeSteps(b, "steps", s.Steps)
	if s.IfDenied != nil {
		writeSteps(b, "if_denied", s.IfDenied)
	}
	if s.OnStop != nil {
		writeSteps(b, "on_stop", s.OnStop)
	}
	if s.DeliverSteers {
		b.WriteString("    steers: deliver\n")
	}
}

func writeSteps(b *bytes.Buffer, key string, steps []Step) {
	if len(steps) == 0 {
		b.WriteString("    " + key + ": []\n")
		return
	}
	b.WriteString("    " + key + ":\n")
	for _, s := range steps {
		b.WriteString("      - after: " + (time.Duration(s.AfterMs) * time.Millisecond).String() + "\n")
		if s.Action == ActEvents {
			b.WriteString("        events:\n")
			for _, e := range s.Body.Arr {
				b.WriteString("          - " + flow(e) + "\n")
			}
			continue
		}
		b.WriteString("        " + s.Action + ": " + flow(s.Body) + "\n")
	}
}

// flow renders v as JSON with ", " and ": " separators and strings quoted
// by quote, which is valid YAML flow too.
func flow(v runs.Value) string {
	var b strings.Builder
	appendFlow(&b, v)
	return b.String()
}

func appendFlow(b *strings.Builder, v runs.Value) {
	switch v.Kind {
	case runs.Null:
		b.WriteString("null")
	case runs.Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case runs.Int:
		b.WriteString(v.Int)
	case runs.Float:
		switch {
		case math.IsInf(v.Float, 1):
			b.WriteString(".inf")
		case math.IsInf(v.Float, -1):
			b.WriteString("-.inf")
		default:
			b.WriteString(runs.FormatPyFloat(v.Float))
		}
	case runs.String:
		b.WriteString(quote(v.Str))
	case runs.Array:
		b.WriteByte('[')
		for i, x := range v.Arr {
			if i > 0 {
				b.WriteString(", ")
			}
			appendFlow(b, x)
		}
		b.WriteByte(']')
	case runs.Object:
		b.WriteByte('{')
		for i, k := range v.Obj.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(k))
			b.WriteString(": ")
			appendFlow(b, v.Obj.Vals[i])
		}
		b.WriteByte('}')
	}
}

// quote renders s as a double-quoted scalar that JSON and YAML both read back
// as s: the JSON escapes, plus \uXXXX for what YAML would not keep as it is —
// DEL, the C1 controls (NEL among them), the line and paragraph separators,
// the byte-order mark and the non-characters U+FFFE/U+FFFF. YAML cannot say a
// lone surrogate (WTF-8, see runs.Value; the YAML loader refuses a \uD800
// escape): like any byte that is not UTF-8, each of its three bytes is
// written as U+FFFD, which is also how RE2 reads such a byte in a match.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7F || r >= 0x80 && r <= 0x9F || r == 0x2028 || r == 0x2029 ||
			r == 0xFEFF || r == 0xFFFE || r == 0xFFFF:
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)) + h)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// oneLine makes s fit in a comment line: what the upstream names (its version,
// its run ids) may hold line breaks, which would end the comment, or bytes
// YAML refuses. Control characters, DEL, the C1 controls and the line and
// paragraph separators become spaces, and invalid UTF-8 becomes U+FFFD.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7F || r >= 0x80 && r <= 0x9F || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF {
			return ' '
		}
		return r
	}, s)
}
