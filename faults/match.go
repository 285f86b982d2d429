package faults

import (
	"math"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Request is what fault matching sees of a vendor request (controls.md §6.5).
type Request struct {
	NS          string // the request's namespace
	OperationID string // matched operationId; "" = unmatched (never matched by an operationId rule)
	Method      string // HTTP method
	Path        string // path after /ns stripping, without query
}

// Effect is a named behaviour switched on for a request by a fired rule
// (controls.md §6.5 step 6). Known names: "hermes.accepted_drop" and
// "hermes.steer_refused"; others are recorded and ignored.
type Effect struct {
	Name   string
	Params runs.Value // the rule's params object, or {} (shared: do not change)
}

// Response is a fault response (controls.md §6.6). Header holds Content-Type
// application/json unless the body is null, then the rule's headers (a rule
// header replaces a default of the same name case-insensitively). NoBody is
// set for "body": null: no body is written. A Response is shared by every
// request its rule answers: callers must not change it.
type Response struct {
	Status int
	Header [][2]string
	Body   []byte
	NoBody bool
}

// Outcome is the result of matching one request against the rules.
type Outcome struct {
	Delay    time.Duration // total real-time delay of the fired rules, to sleep before acting
	Drop     bool          // close the connection without a response
	Response *Response     // non-nil when a rule answered
	Effects  []Effect      // effects of the fired rules, in rule order
	// FaultID is what the journal records (controls.md §6.6): the answering or
	// dropping rule's id, else the id of the first fired rule carrying an
	// effect; never a delay-only rule. "" = none.
	FaultID string
}

// Match walks the rules for one vendor request (controls.md §6.5): in insertion
// order, a rule whose remaining count is 0 is skipped; a rule whose selectors
// match draws — draw is called for every matching rule, even at rate 1 — and
// is skipped when the draw is >= its rate; otherwise it fires: hits+1,
// remaining−1 when counted, its delay and effect are collected, and a drop or
// status rule stops the walk. The caller sleeps Outcome.Delay, then acts.
//
// draw is called with the store locked, so it must not call back into the
// Store. With no rules Match returns at once without allocating.
func (s *Store) Match(r Request, draw func() float64) Outcome {
	if s.n.Load() == 0 {
		return Outcome{}
	}
	return s.match(&r, draw)
}

func (s *Store) match(q *Request, draw func() float64) Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out Outcome
	effectID := ""
	for _, r := range s.rules {
		if r.counted && r.remaining == 0 {
			continue
		}
		if !r.matches(q) || draw() >= r.rate {
			continue
		}
		r.hits++
		if r.counted {
			r.remaining--
		}
		if out.Delay > math.MaxInt64-r.delay {
			out.Delay = math.MaxInt64
		} else {
			out.Delay += r.delay
		}
		if r.hasEffect {
			out.Effects = append(out.Effects, r.effect)
			if effectID == "" {
				effectID = r.id
			}
		}
		if r.drop {
			out.Drop, out.FaultID = true, r.id
			break
		}
		if r.resp != nil {
			out.Response, out.FaultID = r.resp, r.id
			break
		}
	}
	if out.FaultID == "" {
		out.FaultID = effectID
	}
	return out
}
