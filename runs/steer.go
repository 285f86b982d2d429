package runs

import "strings"

// Steer limits (runs-api §6.6 step 5).
const (
	maxSteerText  = 65536 // code points of a part and of the joined text
	maxSteerItems = 1000  // items read from each array
	maxSteerDepth = 10    // levels of nested arrays below the top-level one that still contribute
)

// RunSteer messages (runs-api §6.6).
const (
	msgSteerMissing    = "Missing non-empty steer text; expected 'input', 'message', or 'text'."
	detailSteerNonText = "non-text steer input is outside the verified subset"
)

// SteerNotAccepting is the 409 of the RunSteer gate (runs-api §6.6 step 3).
func SteerNotAccepting(runID string) *Error {
	return Hermes("run_not_accepting_steer", "Run is not currently accepting steer input: "+runID)
}

// SteerRefused is the 409 of the hermes.steer_refused effect (runs-api §6.6 step 6).
func SteerRefused(runID string) *Error {
	return Hermes("steer_not_accepted", "Run did not accept steer text: "+runID)
}

// SteeredEvent builds the run.steered SSE event of a RunSteer success
// (runs-api §6.4.3, §6.6 step 7): the envelope, then accepted true.
func SteeredEvent(runID string, now float64) *Obj {
	e := Event(EventRunSteered, runID, now)
	e.Set("accepted", BoolValue(true))
	return e
}

// SteerText runs runs-api §6.6 steps 4–5 on a parsed body (the caller passes an
// empty object for an unparseable body; any non-object counts as {}): the first
// truthy of input, message, text is normalised — a string cut to 65536 code
// points; an array per normaliseSteerList; any other truthy value → 501 — then
// Python-stripped. An empty result → 400 invalid_steer_input. body is not modified.
func SteerText(body Value) (string, *Error) {
	var v Value
	if body.Kind == Object {
		for _, k := range [...]string{"input", "message", "text"} {
			if x, ok := body.Obj.Get(k); ok && x.Truthy() {
				v = x
				break
			}
		}
	}
	var text string
	switch v.Kind {
	case Null:
	case String:
		text = TruncateCodePoints(v.Str, maxSteerText)
	case Array:
		t, err := normaliseSteerList(v.Arr, 0)
		if err != nil {
			return "", err
		}
		text = t
	default:
		return "", Unsupported(detailSteerNonText)
	}
	text = PyStrip(text)
	if text == "" {
		return "", Hermes("invalid_steer_input", msgSteerMissing)
	}
	return text, nil
}

// normaliseSteerList normalises a steer array at nesting depth (0 = top level):
// of its first 1000 items, a non-empty string contributes itself (cut to 65536
// code points); an object whose "type", Python-stripped and lowercased, is text,
// input_text or output_text contributes its truthy "text", which must be a
// string (→ 501 otherwise), cut to 65536; a nested array contributes its own
// normalisation when at most 10 levels below the top; other items contribute
// nothing. Empty contributions are skipped. Adding stops once the contributions
// reach 65536 code points; they are joined with "\n" and cut to 65536.
func normaliseSteerList(items []Value, depth int) (string, *Error) {
	if len(items) > maxSteerItems {
		items = items[:maxSteerItems]
	}
	var parts []string
	total := 0
	for _, it := range items {
		var part string
		switch it.Kind {
		case String:
			part = TruncateCodePoints(it.Str, maxSteerText)
		case Object:
			typ, _ := it.Obj.Get("type")
			if typ.Kind != String {
				continue
			}
			switch lowerASCII(PyStrip(typ.Str)) {
			case "text", "input_text", "output_text":
			default:
				continue
			}
			t, _ := it.Obj.Get("text")
			if !t.Truthy() {
				continue
			}
			if t.Kind != String {
				return "", Unsupported(detailSteerNonText)
			}
			part = TruncateCodePoints(t.Str, maxSteerText)
		case Array:
			if depth >= maxSteerDepth {
				continue
			}
			p, err := normaliseSteerList(it.Arr, depth+1)
			if err != nil {
				return "", err
			}
			part = p
		}
		if part == "" {
			continue
		}
		parts = append(parts, part)
		total += CodePoints(part)
		if total >= maxSteerText {
			break
		}
	}
	return TruncateCodePoints(strings.Join(parts, "\n"), maxSteerText), nil
}
