package scenarios

import (
	"regexp"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Bounds of a scenario set (a client can make the server hold one per
// namespace; MaxHeldValues and MaxHeldRegexpSize bound them all together).
const (
	// MaxScenarios is the most scenarios one set may hold.
	MaxScenarios = 1000
	// MaxSteps is the most steps one list (steps, if_denied, on_stop) may hold.
	MaxSteps = 1000
	// maxAfterMs bounds a step's delay: the clock's own bound (±8.64e15 ms),
	// which a running clock does not pass (it stands still at the edge).
	maxAfterMs = 8.64e15
)

// Set is a validated scenario set: the scenarios in file order and the file's
// JSON form (what GET /__admin/hermes/scenarios answers). A Set is immutable
// once parsed; runs hold pointers to its scenarios.
type Set struct {
	Scenarios []*Scenario
	source    runs.Value
	// What the set counts against the bounds of all sets (held.go): its
	// JSON values and the size of its compiled regular expressions.
	values, regexpSize int
}

// Scenario is one validated scenario (scenarios §1).
type Scenario struct {
	Name  string
	Match Match
	// Steps is the script; IfDenied replaces the remaining steps when an
	// approval is denied, OnStop when the client stops the run. Both hold
	// their defaults when the file leaves them out.
	Steps, IfDenied, OnStop []Step
	// DeliverSteers is true for steers: deliver (a deliver_steers control is
	// applied just before each later step), false for keep.
	DeliverSteers bool
}

// Match selects the runs a scenario drives; a nil field matches every run.
type Match struct {
	Input     *regexp.Regexp // searched in the run's user message text
	Model     *string        // equal to the record's model (a non-string model never matches)
	SessionID *regexp.Regexp // searched in the record's session_id (a non-string never matches)
}

// Action is what a step does: one Hermes control (controls.md §11).
type Action uint8

// The actions of a step.
const (
	// Observe is POST /__admin/hermes/runs/:id/observe with Body.
	Observe Action = iota + 1
	// Events is POST /__admin/hermes/runs/:id/events with Body ({"events":[…]}).
	Events
	// Approval is an observation to waiting_for_approval (Body is that observe
	// body); the scenario then waits until the approval is answered.
	Approval
	// DeliverSteers is POST /__admin/hermes/runs/:id/steer/deliver.
	DeliverSteers
)

// String is the action's key in the file.
func (a Action) String() string {
	switch a {
	case Observe:
		return "observe"
	case Events:
		return "events"
	case Approval:
		return "approval"
	case DeliverSteers:
		return "deliver_steers"
	}
	return "?"
}

// Step is one validated step: a delay and a control body the control's own
// rules accept (only a rule that depends on the run — a terminal run, a
// request_id already pending — can still refuse it when it falls due).
type Step struct {
	// AfterMs is the delay in emulator milliseconds since the previous step fired
	// (the first step: since admission; after an approval: since the answer).
	AfterMs float64
	Action  Action
	// Body is the control's body: the observe body for Observe and Approval,
	// {"events":[…]} for Events, null for DeliverSteers.
	Body runs.Value
}

// JSON renders the set's file form as JSON (GET /__admin/hermes/scenarios).
// The empty set renders {"scenarios":[]}.
func (s *Set) JSON() []byte {
	if s == nil || s.source.Kind != runs.Object {
		return []byte(`{"scenarios":[]}`)
	}
	return runs.MarshalValue(s.source)
}

// MarshalJSON renders the set as JSON does, so a *Set can go to anything that
// encodes JSON as it is: control.Client.PutScenarios(ctx, set) (README, the Go
// column). Without it encoding/json wrote the struct ({"Scenarios":[…]}),
// which the server refuses.
func (s *Set) MarshalJSON() ([]byte, error) { return s.JSON(), nil }

// Len is the number of scenarios (0 for nil).
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.Scenarios)
}

// Default lists: a denial fails the run, a stop cancels it (scenarios §3).
func defaultIfDenied() []Step {
	return []Step{{Action: Observe, Body: objectValue("status", runs.StringValue(runs.Failed), "error", runs.StringValue("approval denied"))}}
}

func defaultOnStop() []Step {
	return []Step{{Action: Observe, Body: objectValue("status", runs.StringValue(runs.Cancelled))}}
}

// objectValue builds an object from alternating keys and values.
func objectValue(kv ...any) runs.Value {
	o := &runs.Obj{}
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1].(runs.Value))
	}
	return runs.ObjectValue(o)
}
