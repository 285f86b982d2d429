package record

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// MatchMode is how a recorded scenario selects the run it drives on replay.
type MatchMode string

// The match modes of --match.
const (
	// MatchInput selects by the recorded user message: match.input is the
	// anchored, escaped text (with --redact: any text of the same length).
	MatchInput MatchMode = "input"
	// MatchOrder selects the n-th run admitted by the replaying emulator:
	// match.session_id is the id that emulator gives its n-th run in the
	// namespace "default" (runs-api §12.1), which is the run's session_id when
	// the client sends none. A run whose client sent its own session_id is
	// matched by that session_id instead.
	MatchOrder MatchMode = "order"
)

// buildOptions are the choices of one flush.
type buildOptions struct {
	speed  float64 // 1 = recorded timing, 10 = ten times faster
	match  MatchMode
	redact bool
}

// buildScenarios turns recorded runs (in admission order) into scenarios.
func buildScenarios(logs []*runLog, o buildOptions) []Scenario {
	out := make([]Scenario, 0, len(logs))
	firstByInput := map[string]string{}
	// sessions counts the runs of each session_id a client sent: turns of one
	// conversation share one, so it selects a turn only with its input.
	sessions := map[string]int{}
	for _, l := range logs {
		sessions[l.sessionID]++
	}
	for _, l := range logs {
		tl := readTimeline(l)
		s := Scenario{Name: fmt.Sprintf("rec-%03d", l.seq)}
		s.Comment = append(s.Comment, fmt.Sprintf("upstream run %s, admitted %s", l.runID, isoSeconds(tl.admitted)))
		s.Match, s.Comment = match(l, o, firstByInput, sessions[l.sessionID] > 1, s.Name, s.Comment)
		s.Steps, s.IfDenied, s.OnStop = tl.steps(o.speed, 0)
		// A long answer streams many deltas: merge events that are close in
		// time until every list fits the loader's limit.
		for q := 0.01; tooLong(s) && q < 1e6; q *= 2 {
			s.Steps, s.IfDenied, s.OnStop = tl.steps(o.speed, q)
			if !tooLong(s) {
				s.Comment = append(s.Comment, fmt.Sprintf("events within %gms of a step's first event merged into it (at most %d steps a list)", q*1000, scenarios.MaxSteps))
			}
		}
		s.DeliverSteers = tl.deliver()
		if o.redact {
			s.Steps, s.IfDenied, s.OnStop = redactSteps(s.Steps), redactSteps(s.IfDenied), redactSteps(s.OnStop)
		}
		if tl.skipped > 0 {
			s.Comment = append(s.Comment, fmt.Sprintf("%d event frame(s) left out: not scriptable by the events control", tl.skipped))
		}
		if l.oversized > 0 {
			s.Comment = append(s.Comment, fmt.Sprintf("%d SSE event(s) left out: longer than %d bytes", l.oversized, MaxBodyBytes))
		}
		if tl.refused > 0 {
			s.Comment = append(s.Comment, fmt.Sprintf("%d status change(s) left out: the observe control refuses the status", tl.refused))
		}
		if n := tl.trimmed(); n > 0 {
			s.Comment = append(s.Comment, fmt.Sprintf("%d step(s) written without the fields the observe control refuses", n))
		}
		if l.capped {
			s.Comment = append(s.Comment, fmt.Sprintf("recording stopped: the recorder keeps at most %d bytes of observations", maxKeptBytes))
		}
		if l.full {
			s.Comment = append(s.Comment, fmt.Sprintf("recording stopped after %d observations", MaxObservations))
		}
		if tooLong(s) {
			s.Steps, s.IfDenied, s.OnStop = cut(s.Steps), cut(s.IfDenied), cut(s.OnStop)
			s.Comment = append(s.Comment, fmt.Sprintf("step lists cut to %d steps", scenarios.MaxSteps))
		}
		out = append(out, s)
	}
	return out
}

func tooLong(s Scenario) bool {
	return len(s.Steps) > scenarios.MaxSteps || len(s.IfDenied) > scenarios.MaxSteps || len(s.OnStop) > scenarios.MaxSteps
}

func cut(ss []Step) []Step {
	if len(ss) > scenarios.MaxSteps {
		return ss[:scenarios.MaxSteps]
	}
	return ss
}

// match is the scenario's match object and its comment lines. shared: other
// recorded runs have the session_id l's client sent.
func match(l *runLog, o buildOptions, firstByInput map[string]string, shared bool, name string, comment []string) (*runs.Obj, []string) {
	if (o.match == MatchInput || l.sessionOther) && l.hasInput {
		if o.match == MatchOrder {
			comment = append(comment, "matched by its input: its client sent a session_id that is not a string")
		}
		p := inputPattern(l.input, o.redact)
		if first, ok := firstByInput[p]; ok {
			comment = append(comment, "never selected with --match input: "+first+" has the same input and comes first")
		} else {
			firstByInput[p] = name
		}
		return &runs.Obj{Keys: []string{"input"}, Vals: []runs.Value{runs.StringValue(p)}}, comment
	}
	switch {
	case l.sessionOther:
		comment = append(comment, "never selected: its client sent a session_id that is not a string, and its message is not a text")
	case l.sessionID != "":
		p := "^" + regexp.QuoteMeta(l.sessionID) + "$"
		m := &runs.Obj{Keys: []string{"session_id"}, Vals: []runs.Value{runs.StringValue(p)}}
		if !shared {
			comment = append(comment, "matched by the session_id its client sent")
			return m, comment
		}
		// Turns of one conversation: the session_id and the input, so that
		// each turn selects its own scenario — for a message without text,
		// the empty text the emulator reads in it (else this scenario would
		// select every later turn of the conversation).
		in := inputPattern(l.input, o.redact)
		if l.hasInput {
			comment = append(comment, "matched by the session_id its client sent and its input: other runs have that session_id")
		} else {
			comment = append(comment, "matched by the session_id its client sent and an empty input (its message has no text): other runs have that session_id")
		}
		if first, ok := firstByInput[p+"\x00"+in]; ok {
			comment = append(comment, "never selected: "+first+" has the same session_id and input and comes first")
		} else {
			firstByInput[p+"\x00"+in] = name
		}
		m.Set("input", runs.StringValue(in))
		return m, comment
	case o.match == MatchInput:
		comment = append(comment, "the user message is not a text: matched by admission order")
	}
	if !l.sessionOther {
		comment = append(comment, fmt.Sprintf("matched by admission order: run %d of namespace default", l.seq))
	}
	p := "^" + runs.RunID(runs.StorageNS("default"), int64(l.seq)) + "$"
	return &runs.Obj{Keys: []string{"session_id"}, Vals: []runs.Value{runs.StringValue(p)}}, comment
}

// isoSeconds renders epoch seconds as an RFC 3339 UTC time in milliseconds.
func isoSeconds(t float64) string {
	ms := int64(math.Round(t * 1000))
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
