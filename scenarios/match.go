package scenarios

import (
	"strings"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Select returns the scenario that drives a new run (docs/scenarios.md §1.2):
// the first in file order whose match holds, or nil. text is the run's user
// message text (MessageText of the submission's message); model and session are the
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

// MessageText is the text of a run's user message (runs.Submission.Message,
// runs-api §6.1 step 9.4) that match.input is searched in: a string itself; a
// list of content parts, their texts joined with "\n" (non-empty strings, and
// objects whose type is text, input_text or output_text with a non-empty
// string text); anything else "".
func MessageText(m runs.Value) string {
	switch m.Kind {
	case runs.String:
		return m.Str
	case runs.Array:
		var parts []string
		for _, p := range m.Arr {
			if t := partText(p); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func partText(p runs.Value) string {
	if p.Kind == runs.String {
		return p.Str
	}
	if p.Kind != runs.Object {
		return ""
	}
	typ, _ := p.Obj.Get("type")
	t, _ := p.Obj.Get("text")
	if typ.Kind != runs.String || t.Kind != runs.String {
		return ""
	}
	switch strings.ToLower(strings.TrimSpace(typ.Str)) {
	case "text", "input_text", "output_text":
		return t.Str
	}
	return ""
}
