package runs

// The admission decision of RunCreate (runs-api §6.1 steps 2 and 11–12,
// §14.1, §14.2): what a submission does, given the facts the gateway found.

// Decision is the outcome of an admission.
type Decision int

// The decisions, in the order they are checked.
const (
	Create     Decision = iota // admit a new run
	Draining                   // 503 gateway_draining: the namespace drains (§14.2)
	Replay                     // the key's reservation answers again (§7)
	Conflict                   // 409: the key was used with another body (§7)
	AtCapacity                 // 429: at --max-concurrent-runs (§14.1)
)

// AdmissionFacts are what the decision depends on.
type AdmissionFacts struct {
	Draining        bool
	Reserved        bool // a keyed submission whose (scope, key) has a reservation
	SameFingerprint bool // …whose fingerprint is this body's
	Live            int  // unfinished runs with a local owner
	Max             int  // --max-concurrent-runs; 0 = no limit
}

// Decide is the admission decision. A drain refuses everything; a reserved
// key replays or conflicts before capacity is considered (a replay creates
// nothing, so it succeeds at capacity); only then does capacity refuse.
func Decide(f AdmissionFacts) Decision {
	switch {
	case f.Draining:
		return Draining
	case f.Reserved && f.SameFingerprint:
		return Replay
	case f.Reserved:
		return Conflict
	case f.Max > 0 && f.Live >= f.Max:
		return AtCapacity
	}
	return Create
}

// Err is the error a refusing decision answers (nil for Create and Replay);
// max is --max-concurrent-runs.
func (d Decision) Err(max int) *Error {
	switch d {
	case Draining:
		return ErrDraining
	case Conflict:
		return ErrKeyConflict
	case AtCapacity:
		return Throttle(max)
	}
	return nil
}
