package runs

import (
	"math"
)

// The eight run states (runs-api §5). "started" is an admission answer, never a state.
const (
	Queued             = "queued"
	Running            = "running"
	WaitingForApproval = "waiting_for_approval"
	Stopping           = "stopping"
	Completed          = "completed"
	Failed             = "failed"
	Cancelled          = "cancelled"
	Interrupted        = "interrupted"
)

// Default texts written into records (runs-api §4.3).
const (
	// DefaultModel is the record's model when the submission has no "model" key.
	DefaultModel = "hermes-agent"
	// RestartedError is the error of an interrupted run (observe default and stale-owner interruption).
	RestartedError = "The gateway restarted before this run settled."
	// FailedError is the error default of an observed failure.
	FailedError = "agent run failed"
)

// IsTerminal reports whether status is completed, failed, cancelled or interrupted (runs-api §1).
func IsTerminal(status string) bool {
	switch status {
	case Completed, Failed, Cancelled, Interrupted:
		return true
	}
	return false
}

// ValidStatus reports whether s is one of the eight states of runs-api §5.
func ValidStatus(s string) bool {
	switch s {
	case Queued, Running, WaitingForApproval, Stopping:
		return true
	}
	return IsTerminal(s)
}

// RecordStatus returns the record's "status" string ("" when absent or not a string).
func RecordStatus(rec *Obj) string {
	if v, ok := rec.Get("status"); ok && v.Kind == String {
		return v.Str
	}
	return ""
}

// NewRecord builds the admission record (runs-api §4.2 rule 1): object, run_id,
// status "queued", updated_at, created_at, session_id, model. session_id is the
// submission's when truthy, else the run id; model is the submission's value
// verbatim whenever the key was present (null, "", false… included), else "hermes-agent".
func NewRecord(runID string, now float64, s *Submission) *Obj {
	session := StringValue(runID)
	model := StringValue(DefaultModel)
	if s != nil {
		if s.HasSession && s.SessionID.Truthy() {
			session = s.SessionID
		}
		if s.HasModel {
			model = s.Model
		}
	}
	return &Obj{
		Keys: []string{"object", "run_id", "status", "updated_at", "created_at", "session_id", "model"},
		Vals: []Value{StringValue("hermes.run"), StringValue(runID), StringValue(Queued),
			FloatValue(now), FloatValue(now), session, model},
	}
}

// change starts a record change (runs-api §4.2 rule 2): a clone of rec with
// status and updated_at rewritten in place.
func change(rec *Obj, status string, now float64) *Obj {
	r := rec.Clone()
	r.Set("status", StringValue(status))
	r.Set("updated_at", FloatValue(now))
	return r
}

// Stopped is the RunStop change (runs-api §6.3 step 5): status "stopping",
// updated_at = now, last_event "run.stopping", approval removed.
func Stopped(rec *Obj, now float64) *Obj {
	r := change(rec, Stopping, now)
	r.Set("last_event", StringValue("run.stopping"))
	r.Delete("approval")
	return r
}

// Interrupt is the stale-owner interruption (runs-api §10.1): status
// "interrupted", updated_at = now, then error and last_event; every other field,
// approval included, is kept.
func Interrupt(rec *Obj, now float64) *Obj {
	r := change(rec, Interrupted, now)
	r.Set("error", StringValue(RestartedError))
	r.Set("last_event", StringValue("run.interrupted"))
	return r
}

// EventApplied records a scripted event (controls §11.2 step 6): last_event =
// event and updated_at = now; status and approval unchanged. Callers must not
// call it for message.delta, which changes nothing.
func EventApplied(rec *Obj, event string, now float64) *Obj {
	r := rec.Clone()
	r.Set("updated_at", FloatValue(now))
	r.Set("last_event", StringValue(event))
	return r
}

// ApprovalResponded is the RunApproval success change (runs-api §6.5.2 step 10):
// status "running", updated_at = now, last_event "approval.responded", approval removed.
func ApprovalResponded(rec *Obj, now float64) *Obj {
	r := change(rec, Running, now)
	r.Set("last_event", StringValue("approval.responded"))
	r.Delete("approval")
	return r
}

// Steered is the RunSteer success change (runs-api §6.6 step 7): last_event
// "run.steered" and updated_at = now. The status is unchanged (the gate of step 3
// already required "running").
func Steered(rec *Obj, now float64) *Obj {
	return EventApplied(rec, EventRunSteered, now)
}

// ShouldPersist is the persist rule of runs-api §10.2: after a change from
// before to after, the durable copy is rewritten unless the status did not
// change, the new status is not terminal, and the change wrote none of output,
// usage, error and pending_steer (a field counts as written when its presence
// or value differs).
func ShouldPersist(before, after *Obj) bool {
	st := RecordStatus(after)
	if st != RecordStatus(before) || IsTerminal(st) {
		return true
	}
	for _, k := range [...]string{"output", "usage", "error", "pending_steer"} {
		a, aok := after.Get(k)
		b, bok := before.Get(k)
		if aok != bok || (aok && !sameValue(a, b)) {
			return true
		}
	}
	return false
}

// sameValue reports whether a and b render identically: same kinds (Int and
// Float differ), same float bits (-0.0 differs from 0.0), same key order.
func sameValue(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Null:
		return true
	case Bool:
		return a.Bool == b.Bool
	case Int:
		return a.Int == b.Int
	case Float:
		return math.Float64bits(a.Float) == math.Float64bits(b.Float)
	case String:
		return a.Str == b.Str
	case Array:
		if len(a.Arr) != len(b.Arr) {
			return false
		}
		for i := range a.Arr {
			if !sameValue(a.Arr[i], b.Arr[i]) {
				return false
			}
		}
		return true
	case Object:
		if a.Obj.Len() != b.Obj.Len() {
			return false
		}
		for i, k := range a.Obj.Keys {
			if b.Obj.Keys[i] != k || !sameValue(a.Obj.Vals[i], b.Obj.Vals[i]) {
				return false
			}
		}
		return true
	}
	return false
}
