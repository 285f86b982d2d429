package runs

import (
	"math"
	"strconv"
	"strings"
)

// Observe is a validated body of POST /__admin/hermes/runs/:id/observe (controls §11.1).
type Observe struct {
	// Status is the observed state, one of the eight of runs-api §5.
	Status string
	// Body is the validated body, unchanged.
	Body *Obj
	// Approval is the body's approval object (only with waiting_for_approval); nil when absent.
	Approval *Obj
	// ApprovalRequestID is approval.request_id when HasRequestID.
	ApprovalRequestID string
	HasRequestID      bool
	// Usage is the normalised usage object (input_tokens, output_tokens,
	// total_tokens as Int, in that order) when the body has "usage"; else nil.
	Usage *Obj
}

// Maximum usage count and approval request_id length accepted by observe.
const (
	maxSafeInteger     = 1<<53 - 1
	maxRequestIDLength = 256
)

// Observe validation messages (controls §11.1 steps 2–9).
const (
	msgObserveStatus       = "observe: expected a supported status"
	msgObserveField        = "observe: unsupported field"
	msgObserveResult       = "observe: result fields require completed status"
	msgObserveError        = "observe: error requires failed or interrupted status"
	msgObserveApproval     = "observe: approval requires waiting_for_approval and an object"
	msgObserveRequestID    = "observe: approval request_id must be a nonempty trimmed string of at most 256 characters"
	msgObservePending      = "observe: approval request_id is already pending"
	msgObserveUsage        = "observe: usage requires three nonnegative token counts"
	msgObserveTerminal     = "observe: terminal runs cannot be changed"
	observeStringTail      = " must be a string"
	observeMessagePrefix   = "observe: "
	terminalEventPrefix    = "run."
	steerJoiner            = "\n"
	usageKeyInput          = "input_tokens"
	usageKeyOutput         = "output_tokens"
	usageKeyTotal          = "total_tokens"
	approvalRequestIDField = "request_id"
)

// ErrObserveTerminal is the 409 of an observation on a terminal run (controls §11.1 step 10).
var ErrObserveTerminal = Hermes("mock_terminal_run", msgObserveTerminal)

var observeKeys = map[string]bool{
	"status": true, "last_event": true, "output": true, "usage": true,
	"error": true, "approval": true, "pending_steer": true,
}

// ParseObserve runs controls §11.1 steps 2–9 in order; the first failure wins
// (400, Hermes envelope, code null). hasBody=false means no body was sent (step 2
// fails). isPending reports whether a request_id is already pending for this run
// (step 8's second check); nil means nothing is pending. The terminal check
// (step 10, ErrObserveTerminal) is the caller's. body is not modified.
func ParseObserve(body Value, hasBody bool, isPending func(requestID string) bool) (*Observe, *Error) {
	// Step 2.
	if !hasBody || body.Kind != Object {
		return nil, Hermes("", msgObserveStatus)
	}
	b := body.Obj
	st, _ := b.Get("status")
	if st.Kind != String || !ValidStatus(st.Str) {
		return nil, Hermes("", msgObserveStatus)
	}
	o := &Observe{Status: st.Str, Body: b}
	// Step 3.
	for _, k := range b.Keys {
		if !observeKeys[k] {
			return nil, Hermes("", msgObserveField)
		}
	}
	// Step 4.
	for _, k := range [...]string{"last_event", "output", "error", "pending_steer"} {
		if v, ok := b.Get(k); ok && v.Kind != String {
			return nil, Hermes("", observeMessagePrefix+k+observeStringTail)
		}
	}
	// Step 5.
	if (b.Has("output") || b.Has("usage") || b.Has("pending_steer")) && o.Status != Completed {
		return nil, Hermes("", msgObserveResult)
	}
	// Step 6.
	if b.Has("error") && o.Status != Failed && o.Status != Interrupted {
		return nil, Hermes("", msgObserveError)
	}
	// Step 7.
	if a, ok := b.Get("approval"); ok {
		if o.Status != WaitingForApproval || a.Kind != Object {
			return nil, Hermes("", msgObserveApproval)
		}
		o.Approval = a.Obj
	}
	// Step 8.
	if o.Approval != nil {
		if r, ok := o.Approval.Get(approvalRequestIDField); ok {
			if r.Kind != String || r.Str == "" || CodePoints(r.Str) > maxRequestIDLength || PyStrip(r.Str) != r.Str {
				return nil, Hermes("", msgObserveRequestID)
			}
			if isPending != nil && isPending(r.Str) {
				return nil, Hermes("", msgObservePending)
			}
			o.ApprovalRequestID, o.HasRequestID = r.Str, true
		}
	}
	// Step 9.
	if u, ok := b.Get("usage"); ok {
		usage, good := parseUsage(u)
		if !good {
			return nil, Hermes("", msgObserveUsage)
		}
		o.Usage = usage
	}
	return o, nil
}

// parseUsage checks an observed usage value (controls §11.1 step 9): an object
// with exactly the three token counts, each an integral number in 0..2^53−1
// (2, 2.0 and 2e0 alike). It returns them as Int values in the order
// input_tokens, output_tokens, total_tokens.
func parseUsage(u Value) (*Obj, bool) {
	if u.Kind != Object {
		return nil, false
	}
	keys := [...]string{usageKeyInput, usageKeyOutput, usageKeyTotal}
	for _, k := range u.Obj.Keys {
		if k != usageKeyInput && k != usageKeyOutput && k != usageKeyTotal {
			return nil, false
		}
	}
	out := &Obj{}
	for _, k := range keys {
		v, ok := u.Obj.Get(k)
		if !ok {
			return nil, false
		}
		n, ok := tokenCount(v)
		if !ok {
			return nil, false
		}
		out.Set(k, IntValue(n))
	}
	return out, true
}

// tokenCount returns v as an integer when it is an integral number from 0 to 2^53−1.
func tokenCount(v Value) (int64, bool) {
	switch v.Kind {
	case Int:
		if strings.HasPrefix(v.Int, "-") {
			return 0, false
		}
		n, err := strconv.ParseInt(v.Int, 10, 64)
		if err != nil || n > maxSafeInteger {
			return 0, false
		}
		return n, true
	case Float:
		f := v.Float
		if math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) || f < 0 || f > maxSafeInteger {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// zeroUsage is the usage default of an observed completion (runs-api §4.3).
func zeroUsage() *Obj {
	return &Obj{
		Keys: []string{usageKeyInput, usageKeyOutput, usageKeyTotal},
		Vals: []Value{IntValue(0), IntValue(0), IntValue(0)},
	}
}

// ApplyObserve performs the record part of controls §11.1 step 11: status and
// updated_at rewritten in place, then the fields of runs-api §4.2's table with
// the defaults of §4.3:
//
//   - queued / running: last_event only when the body gives it;
//   - waiting_for_approval: last_event (default "approval.request"), approval = approval
//     (the §6.5.1 event built by ApprovalEvent; nil writes {});
//   - stopping / cancelled: last_event (default "run.<status>");
//   - completed: output (default ""), usage (default zeros), last_event, and
//     pending_steer from the body, else steerQueue joined with "\n" when non-empty,
//     else absent;
//   - failed / interrupted: error (defaults "agent run failed" /
//     "The gateway restarted before this run settled."), last_event.
//
// approval is removed for every status other than waiting_for_approval. rec is
// not modified; the new record is returned.
func ApplyObserve(rec *Obj, o *Observe, now float64, approval *Obj, steerQueue []string) *Obj {
	r := change(rec, o.Status, now)
	b := o.Body
	lastEvent := func(def string) {
		if v, ok := b.Get("last_event"); ok {
			r.Set("last_event", v)
		} else if def != "" {
			r.Set("last_event", StringValue(def))
		}
	}
	stringOr := func(k, def string) Value {
		if v, ok := b.Get(k); ok {
			return v
		}
		return StringValue(def)
	}
	switch o.Status {
	case Queued, Running:
		lastEvent("")
	case WaitingForApproval:
		lastEvent(EventApprovalRequest)
		r.Set("approval", ObjectValue(approval))
	case Stopping, Cancelled:
		lastEvent(terminalEventPrefix + o.Status)
	case Completed:
		r.Set("output", stringOr("output", ""))
		usage := o.Usage
		if usage == nil {
			usage = zeroUsage()
		}
		r.Set("usage", ObjectValue(usage))
		lastEvent(terminalEventPrefix + o.Status)
		if v, ok := b.Get("pending_steer"); ok {
			r.Set("pending_steer", v)
		} else if len(steerQueue) > 0 {
			r.Set("pending_steer", StringValue(strings.Join(steerQueue, steerJoiner)))
		}
	case Failed:
		r.Set("error", stringOr("error", FailedError))
		lastEvent(terminalEventPrefix + o.Status)
	case Interrupted:
		r.Set("error", stringOr("error", RestartedError))
		lastEvent(terminalEventPrefix + o.Status)
	}
	if o.Status != WaitingForApproval {
		r.Delete("approval")
	}
	return r
}

// The approval choices of runs-api §6.5.1 step 4.
var (
	choicesNoSession   = []string{"once", "deny"}
	choicesNoPermanent = []string{"once", "session", "deny"}
	choicesAll         = []string{"once", "session", "always", "deny"}
)

// ApprovalEvent builds the approval event E of runs-api §6.5.1 from the observe
// body's approval object a (nil means {}): a copy of a in a's key order; a
// generated request_id appended when a has none (newRequestID is called only
// then); then event "approval.request", run_id, timestamp = now and choices,
// each overwritten in place when a already has the key, else appended. choices
// is ["once","deny"] when a.smart_denied is truthy or a.allow_session is exactly
// false, else ["once","session","deny"] when a.allow_permanent is exactly false,
// else ["once","session","always","deny"]. a is not modified.
func ApprovalEvent(a *Obj, runID string, now float64, newRequestID func() string) *Obj {
	var e *Obj
	if a == nil {
		e = &Obj{}
	} else {
		e = a.Clone()
	}
	if !e.Has(approvalRequestIDField) {
		e.Set(approvalRequestIDField, StringValue(newRequestID()))
	}
	choices := choicesAll
	sd, _ := e.Get("smart_denied")
	as, hasAS := e.Get("allow_session")
	ap, hasAP := e.Get("allow_permanent")
	switch {
	case sd.Truthy() || (hasAS && as.Kind == Bool && !as.Bool):
		choices = choicesNoSession
	case hasAP && ap.Kind == Bool && !ap.Bool:
		choices = choicesNoPermanent
	}
	vals := make([]Value, len(choices))
	for i, c := range choices {
		vals[i] = StringValue(c)
	}
	e.Set("event", StringValue(EventApprovalRequest))
	e.Set("run_id", StringValue(runID))
	e.Set("timestamp", FloatValue(now))
	e.Set("choices", ArrayValue(vals...))
	return e
}

// TerminalEvent returns the SSE event of a terminal observation (runs-api
// §6.4.3) built from the new record rec: run.completed with output, usage and
// pending_steer (only when the record has it); run.failed with error;
// run.cancelled with no fields. It returns nil for interrupted (which ends the
// stream without a data frame) and for unfinished statuses.
func TerminalEvent(rec *Obj, runID string, now float64) *Obj {
	st := RecordStatus(rec)
	var fields []string
	switch st {
	case Completed:
		fields = []string{"output", "usage", "pending_steer"}
	case Failed:
		fields = []string{"error"}
	case Cancelled:
	default:
		return nil
	}
	e := Event(terminalEventPrefix+st, runID, now)
	for _, k := range fields {
		if v, ok := rec.Get(k); ok {
			e.Set(k, v)
		}
	}
	return e
}
