package scenarios

import (
	"strconv"
	"strings"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Select returns the scenario that drives a new run (scenarios §1.2):
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

// ForRun returns the scenario that drives new run id submitted as sub
// (scenarios §1.2): Select on the message text of sub and the model
// and session_id its record is admitted with (the session defaults to the
// run id); nil when none matches.
func (s *Set) ForRun(id string, sub *runs.Submission) *Scenario {
	if s.Len() == 0 {
		return nil
	}
	rec := runs.NewRecord(id, 0, sub)
	model, _ := rec.Get("model")
	session, _ := rec.Get("session_id")
	return s.Select(MessageText(sub.Message), model, session)
}

// Sets is every namespace's scenario set: its own, else Default. It is not
// safe for concurrent use: its owner (the gateway) serialises calls.
type Sets struct {
	Default *Set            // every namespace's set unless it has its own (serve --scenarios); nil = none
	own     map[string]*Set // a namespace's own set; a nil value: deleted, none until the next Put
	// What the own sets count together (Set.held): values, regexpSize.
	values, regexpSize int
}

// Of returns ns's set: its own, else the default; nil when it has none.
func (s *Sets) Of(ns string) *Set {
	if set, ok := s.own[ns]; ok {
		return set
	}
	return s.Default
}

// Put stores ns's own set; nil leaves ns without scenarios, not even the
// default, until the next Put. At most max namespaces hold a set of their own
// (or its deletion): 429 beyond. The own sets and the default (once) hold at
// most MaxHeldValues values and MaxHeldRegexpSize of compiled regular
// expressions together, a set replaced or deleted counting no more: 409
// `scenario sets hold more than 1000000 values in all namespaces`, or
// `scenario sets' regular expressions compile to more than 1000000
// instructions in all namespaces`, for a set that would take them past one
// (never a deletion, nor a set that counts no more than the one it
// replaces). Nothing changes on any refusal.
func (s *Sets) Put(ns string, set *Set, max int) *runs.Error {
	old, ok := s.own[ns]
	if !ok && len(s.own) >= max {
		return runs.Admin(429, "too many namespaces with scenarios (max "+strconv.Itoa(max)+")")
	}
	defValues, defSize := s.Default.held()
	oldValues, oldSize := old.held()
	newValues, newSize := set.held()
	values := s.values - oldValues + newValues
	size := s.regexpSize - oldSize + newSize
	if newValues > oldValues && defValues+values > MaxHeldValues {
		return runs.Admin(409, msgHeldValues)
	}
	if newSize > oldSize && defSize+size > MaxHeldRegexpSize {
		return runs.Admin(409, msgHeldRegexp)
	}
	if s.own == nil {
		s.own = map[string]*Set{}
	}
	s.own[ns] = set
	s.values, s.regexpSize = values, size
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
