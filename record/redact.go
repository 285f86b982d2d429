package record

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Placeholder is the character a redacted text is made of: one per code point
// of the original, so lengths survive and nothing else does.
const Placeholder = "x"

// maxLengthRegexp is the longest input a redacted match can select by exact
// length: RE2 refuses a repeat count above 1000.
const maxLengthRegexp = 1000

// freeText are the fields of observe and event bodies that carry free text
// (docs/record.md "Redaction"): agent output, errors, pending steer text,
// message deltas, tool previews, reasoning and subagent texts.
var freeText = map[string]bool{
	"output": true, "error": true, "pending_steer": true, "delta": true, "preview": true,
	"text": true, "goal": true, "summary": true, "output_tail": true,
}

// redactString replaces every code point of s by Placeholder.
func redactString(s string) string {
	return strings.Repeat(Placeholder, utf8.RuneCountInString(s))
}

// redactAll replaces every string inside v (at any depth) by its placeholder.
func redactAll(v runs.Value) runs.Value {
	switch v.Kind {
	case runs.String:
		return runs.StringValue(redactString(v.Str))
	case runs.Array:
		out := make([]runs.Value, len(v.Arr))
		for i, x := range v.Arr {
			out[i] = redactAll(x)
		}
		return runs.ArrayValue(out...)
	case runs.Object:
		o := v.Obj.Clone()
		for i := range o.Vals {
			o.Vals[i] = redactAll(o.Vals[i])
		}
		return runs.ObjectValue(o)
	}
	return v
}

// redactFields replaces the string values of the free-text keys of o.
func redactFields(o *runs.Obj) *runs.Obj {
	o = o.Clone()
	for i, k := range o.Keys {
		if freeText[k] && o.Vals[i].Kind == runs.String {
			o.Vals[i] = runs.StringValue(redactString(o.Vals[i].Str))
		}
	}
	return o
}

// redactStep returns s with its free text replaced: the free-text fields of an
// observe body and of each event, and every string of an approval object but
// its request_id (commands, descriptions, patterns).
func redactStep(s Step) Step {
	switch s.Action {
	case ActObserve:
		s.Body = runs.ObjectValue(redactFields(s.Body.Obj))
	case ActEvents:
		out := make([]runs.Value, len(s.Body.Arr))
		for i, e := range s.Body.Arr {
			out[i] = runs.ObjectValue(redactFields(e.Obj))
		}
		s.Body = runs.ArrayValue(out...)
	case ActApproval:
		o := s.Body.Obj.Clone()
		for i, k := range o.Keys {
			if k != "request_id" {
				o.Vals[i] = redactAll(o.Vals[i])
			}
		}
		s.Body = runs.ObjectValue(o)
	}
	return s
}

func redactSteps(ss []Step) []Step {
	if ss == nil {
		return nil
	}
	out := make([]Step, len(ss))
	for i, s := range ss {
		out[i] = redactStep(s)
	}
	return out
}

// inputPattern is the match.input of a recorded user message: the text
// itself, anchored and escaped; redacted, any text of the same length (at
// least maxLengthRegexp code points for a longer one).
func inputPattern(text string, redact bool) string {
	if !redact {
		return "^" + regexp.QuoteMeta(text) + "$"
	}
	n := utf8.RuneCountInString(text)
	if n > maxLengthRegexp {
		return "^(?s:.{" + strconv.Itoa(maxLengthRegexp) + ",})$"
	}
	return "^(?s:.{" + strconv.Itoa(n) + "})$"
}
