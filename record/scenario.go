package record

import (
	"math"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Scenario is one recorded run written as a scenario (scenarios.md §1).
type Scenario struct {
	Name string
	// Comment lines are written above the scenario (without "# ").
	Comment []string
	// Match is the scenario's match object: {"input": …} or {"session_id": …}.
	Match *runs.Obj
	// Steps, IfDenied and OnStop are the step lists; a nil IfDenied or OnStop
	// is left out of the file (the loader's default applies).
	Steps, IfDenied, OnStop []Step
	// DeliverSteers writes `steers: deliver`.
	DeliverSteers bool
}

// Action names of a step (scenarios.md §1.1).
const (
	ActObserve  = "observe"
	ActEvents   = "events"
	ActApproval = "approval"
	// ActDeliverSteers is the deliver_steers action (body true).
	ActDeliverSteers = "deliver_steers"
)

// Step is one step: a delay and one action with its body (an object for
// observe and approval, an array of events for events).
type Step struct {
	AfterMs int64
	Action  string
	Body    runs.Value
}

// change is one thing the upstream's agent did to a run, on the upstream's
// time axis (epoch seconds).
type change struct {
	t     float64
	order int // arrival order, for ties
	step  Step
	// trimmed: fields the observe control refuses were left out (scriptable).
	trimmed bool
}

// answer is an accepted approval answer on the upstream's time axis.
type answer struct {
	t     float64
	order int // observation index
	deny  bool
}

// timeline is a run's lifecycle as the builder reads it: the agent's changes,
// the client's answers and its first accepted stop, and the facts the last
// steps need.
type timeline struct {
	admitted float64
	changes  []change
	answers  []answer
	stopped  bool
	stopAt   float64
	// stopOrder is the observation index of the stop.
	stopOrder int
	steers    []string
	final     *runs.Obj // the last record read, nil when none
	skipped   int       // frames of events the events control cannot script
	refused   int       // status changes the observe control refuses (scriptable)
}

// maxDelayMs is the longest delay a step's after can say: a Go duration
// string (what the file writes) holds at most math.MaxInt64 nanoseconds.
const maxDelayMs = math.MaxInt64 / int64(time.Millisecond)

// delayMs is the step delay from upstream time from to time to (seconds): the
// difference of both in whole milliseconds, divided by speed, clamped to
// 0..maxDelayMs — an upstream time far from the others (a timestamp in
// milliseconds, 1e300) must not wrap around into a delay the loader refuses.
func delayMs(from, to, speed float64) int64 {
	d := math.Round(to*1000/speed) - math.Round(from*1000/speed)
	switch {
	case !(d > 0): // NaN too
		return 0
	case d >= float64(maxDelayMs):
		return maxDelayMs
	}
	return int64(d)
}

// knownLastEvent reports whether name is a last_event the emulator writes by
// itself (runs-api §4.3, §6.4.3); an observation only needs to state the
// others.
func knownLastEvent(name string) bool {
	switch name {
	case runs.EventMessageDelta, runs.EventToolStarted, runs.EventToolCompleted, runs.EventReasoningAvailable,
		runs.EventSubagentStart, runs.EventSubagentComplete, runs.EventApprovalRequest,
		runs.EventApprovalResponded, runs.EventRunSteered, "run.stopping", "run.completed",
		"run.failed", "run.cancelled", "run.interrupted":
		return true
	}
	return false
}

// withKeys returns a new object holding the keys of src that are in keys, in
// keys' order.
func withKeys(src *runs.Obj, keys ...string) *runs.Obj {
	out := &runs.Obj{}
	for _, k := range keys {
		if v, ok := src.Get(k); ok {
			out.Set(k, v)
		}
	}
	return out
}

// without returns a copy of src without the given keys.
func without(src *runs.Obj, keys ...string) *runs.Obj {
	out := src.Clone()
	for _, k := range keys {
		out.Delete(k)
	}
	return out
}

// observeBody is the observation that reproduces record rec's status
// (runs-api §4.3): the status, its result fields and last_event when it is not
// the one the emulator would write by itself.
func observeBody(rec *runs.Obj, steers []string, deliver bool) *runs.Obj {
	status := str(rec, "status")
	var body *runs.Obj
	switch status {
	case "completed":
		body = withKeys(rec, "status", "output", "usage")
		if ps, ok := rec.Get("pending_steer"); ok && (deliver || ps.Kind != runs.String || ps.Str != joinLines(steers)) {
			body.Set("pending_steer", ps)
		}
	case "failed", "interrupted":
		body = withKeys(rec, "status", "error")
	default:
		body = withKeys(rec, "status")
	}
	le := str(rec, "last_event")
	if le != "" && le != "run."+status && !knownLastEvent(le) {
		body.Set("last_event", runs.StringValue(le))
	}
	return body
}

// terminalFrameBody is the observation behind a terminal SSE frame
// (run.completed, run.failed, run.cancelled), when no record showed it.
func terminalFrameBody(ev *runs.Obj, steers []string) *runs.Obj {
	switch str(ev, "event") {
	case "run.completed":
		rec := withKeys(ev, "output", "usage", "pending_steer")
		rec.Set("status", runs.StringValue("completed"))
		return observeBody(rec, steers, false)
	case "run.failed":
		return observeBody(withKeysStatus(ev, "failed", "error"), steers, false)
	}
	return withKeysStatus(ev, "cancelled")
}

// withKeysStatus is {"status": status} followed by the keys of src in keys.
func withKeysStatus(src *runs.Obj, status string, keys ...string) *runs.Obj {
	out := &runs.Obj{Keys: []string{"status"}, Vals: []runs.Value{runs.StringValue(status)}}
	for _, k := range keys {
		if v, ok := src.Get(k); ok {
			out.Set(k, v)
		}
	}
	return out
}

// approvalData is the approval object A behind an approval.request event
// (runs-api §6.5.1): the event without event, run_id, timestamp and choices.
func approvalData(ev *runs.Obj) *runs.Obj {
	return without(ev, "event", "run_id", "timestamp", "choices")
}

func joinLines(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += "\n"
		}
		out += s
	}
	return out
}

func obj(o *runs.Obj) runs.Value { return runs.ObjectValue(o) }
