package scenarios

import (
	"strings"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Select returns the scenario that drives a new run (docs/scenarios.md §1.2):
// the first in file order whose match holds, or nil. text is the run's user
// message text (UserText of the submission body); model and session are the
// new record's model and session_id values.
func (s *Set) Select(text string, model, session runs.Value) *Scenario {
	if s == nil {
		return nil
	}
	for _, sc := range s.Scenarios {
		if sc.Match.Holds(text, model, session) {
			return sc
		}
	}
	return nil
}

// Holds reports whether every given field of m holds: input is searched in
// text, model equals the record's model (a string), session_id is searched in
// the record's session_id (a string). Non-string values never match a given field.
func (m Match) Holds(text string, model, session runs.Value) bool {
	if m.Input != nil && !m.Input.MatchString(text) {
		return false
	}
	if m.Model != nil && (model.Kind != runs.String || model.Str != *m.Model) {
		return false
	}
	if m.SessionID != nil && (session.Kind != runs.String || !m.SessionID.MatchString(session.Str)) {
		return false
	}
	return true
}

// UserText is the user message text of a valid RunCreate body (runs-api §6.1
// step 9.4): a string input itself; for a message list, the last element's
// content — a string itself, a list of content parts their texts joined with
// "\n" (strings, and objects whose type is text, input_text or output_text
// with a string text, as steer input is joined, runs-api §6.6) — else "".
func UserText(body runs.Value) string {
	if body.Kind != runs.Object {
		return ""
	}
	input, _ := body.Obj.Get("input")
	switch input.Kind {
	case runs.String:
		return input.Str
	case runs.Array:
		if len(input.Arr) == 0 {
			return ""
		}
		last := input.Arr[len(input.Arr)-1]
		if last.Kind != runs.Object {
			return ""
		}
		c, _ := last.Obj.Get("content")
		return contentText(c)
	}
	return ""
}

func contentText(c runs.Value) string {
	switch c.Kind {
	case runs.String:
		return c.Str
	case runs.Array:
		var parts []string
		for _, p := range c.Arr {
			if p.Kind == runs.String && p.Str != "" {
				parts = append(parts, p.Str)
				continue
			}
			if p.Kind != runs.Object {
				continue
			}
			typ, _ := p.Obj.Get("type")
			t, _ := p.Obj.Get("text")
			switch strings.ToLower(strings.TrimSpace(typ.Str)) {
			case "text", "input_text", "output_text":
				if typ.Kind == runs.String && t.Kind == runs.String && t.Str != "" {
					parts = append(parts, t.Str)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
