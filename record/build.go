package record

import (
	"math"
	"sort"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// offset estimates local time minus upstream time from the observations that
// carry both (a record's updated_at, a frame's timestamp): the smallest
// difference, i.e. the clock offset plus the fastest delivery seen. It is 0
// when nothing carries an upstream time.
func offset(l *runLog) float64 {
	best := math.Inf(1)
	for _, o := range l.obs {
		var key string
		switch o.kind {
		case obsRecord:
			key = "updated_at"
		case obsFrame:
			key = "timestamp"
		default:
			continue
		}
		if t, ok := num(o.body, key); ok && o.at-t < best {
			best = o.at - t
		}
	}
	if math.IsInf(best, 1) {
		return 0
	}
	return best
}

// readTimeline turns a run's observations into its timeline, every time on the
// upstream's clock: a status change read by a poll is placed at the record's
// updated_at, a frame at its timestamp, and what has no upstream time (an
// admission nobody polled, an answer nobody saw echoed) at its local arrival
// time moved by offset.
//
// Observations are read in arrival order: an answer is learnt only after it
// has crossed, so one may be appended after the next request's.
func readTimeline(l *runLog) *timeline {
	sort.SliceStable(l.obs, func(a, b int) bool { return l.obs[a].at < l.obs[b].at })
	off := offset(l)
	tl := &timeline{admitted: l.admitted - off}
	haveCreated := false
	prev := "queued"
	seen := map[string]bool{} // approval request ids already placed
	terminal := -1            // index of the terminal change
	var responded []float64   // approval.responded frame times
	var answered []int        // obs index of each answer
	stopObs := -1
	for i, o := range l.obs {
		switch o.kind {
		case obsRecord:
			if c, ok := num(o.body, "created_at"); ok && !haveCreated {
				tl.admitted, haveCreated = c, true
			}
			tl.final = o.body
			prev = tl.readRecord(o.body, i, prev, stopObs >= 0, seen, &terminal)
		case obsFrame:
			tl.readFrame(o.body, i, seen, &terminal, &responded)
		case obsAnswer:
			answered = append(answered, i)
			tl.answers = append(tl.answers, answer{t: o.at - off, order: i, deny: str(o.body, "choice") == "deny"})
		case obsStop:
			if stopObs < 0 {
				stopObs = i
				tl.stopped, tl.stopAt, tl.stopOrder = true, o.at-off, i
			}
		case obsSteer:
			tl.steers = append(tl.steers, o.text)
		}
	}
	tl.placeAnswers(l, answered, responded)
	if stopObs >= 0 {
		tl.stopAt = firstRecordTime(l, stopObs, "stopping", tl.stopAt)
	}
	if terminal >= 0 && tl.final != nil && runs.IsTerminal(str(tl.final, "status")) {
		if body, trimmed, ok := scriptable(ActObserve, observeBody(tl.final, tl.steers, tl.deliver())); ok {
			tl.changes[terminal].step.Body, tl.changes[terminal].trimmed = obj(body), trimmed
		}
	}
	return tl
}

// readRecord places the change a polled record shows, if any, and returns its status.
func (tl *timeline) readRecord(rec *runs.Obj, i int, prev string, stopped bool, seen map[string]bool, terminal *int) string {
	status := str(rec, "status")
	at, _ := num(rec, "updated_at")
	switch {
	case status == "waiting_for_approval":
		a, ok := rec.Get("approval")
		if ok && a.Kind == runs.Object && !seen[str(a.Obj, "request_id")] {
			seen[str(a.Obj, "request_id")] = true
			if t, ok := num(a.Obj, "timestamp"); ok {
				at = t
			}
			tl.add(at, i, ActApproval, obj(approvalData(a.Obj)))
		}
	case status == prev:
	case runs.IsTerminal(status):
		if *terminal < 0 {
			*terminal = len(tl.changes)
			tl.add(at, i, ActObserve, obj(observeBody(rec, tl.steers, false)))
		}
	case status == "running" && (str(rec, "last_event") == runs.EventApprovalResponded || str(rec, "last_event") == runs.EventRunSteered):
		// the client's answer or steer moved it, not the agent
	case status == "stopping" && stopped:
		// the client's stop
	default:
		tl.add(at, i, ActObserve, obj(observeBody(rec, nil, false)))
	}
	return status
}

// readFrame places the change an SSE frame shows, if any.
func (tl *timeline) readFrame(ev *runs.Obj, i int, seen map[string]bool, terminal *int, responded *[]float64) {
	at, _ := num(ev, "timestamp")
	switch name := str(ev, "event"); name {
	case runs.EventApprovalRequest:
		if id := str(ev, "request_id"); !seen[id] {
			seen[id] = true
			tl.add(at, i, ActApproval, obj(approvalData(ev)))
		}
	case "run.completed", "run.failed", "run.cancelled":
		if *terminal < 0 {
			*terminal = len(tl.changes)
			tl.add(at, i, ActObserve, obj(terminalFrameBody(ev, tl.steers)))
		}
	case runs.EventApprovalResponded:
		*responded = append(*responded, at)
	case runs.EventRunSteered:
	default:
		e := without(ev, "run_id", "timestamp")
		body := &runs.Obj{Keys: []string{"events"}, Vals: []runs.Value{runs.ArrayValue(obj(e))}}
		if _, err := runs.ParseEvents(obj(body), true); err != nil {
			tl.skipped++
			return
		}
		tl.add(at, i, ActEvents, runs.ArrayValue(obj(e)))
	}
}

// add places one change. An observe or approval body keeps only what the
// observe control accepts (scriptable); one it refuses whole is left out.
func (tl *timeline) add(t float64, order int, action string, body runs.Value) {
	trimmed := false
	if action == ActObserve || action == ActApproval {
		b, tr, ok := scriptable(action, body.Obj)
		if !ok {
			tl.refused++
			return
		}
		body, trimmed = obj(b), tr
	}
	tl.changes = append(tl.changes, change{t: t, order: order, step: Step{Action: action, Body: body}, trimmed: trimmed})
}

// scriptable returns the part of an observe or approval step body that the
// observe control accepts, and so the scenario loader too: the body itself,
// or — when the upstream wrote a field in a shape the control refuses (a
// malformed or newer gateway: a null output, a fourth usage count, an
// untrimmed request_id) — the body without each such field (trimmed). ok is
// false when not even the status is accepted.
func scriptable(action string, body *runs.Obj) (out *runs.Obj, trimmed, ok bool) {
	accepts := func(b *runs.Obj) bool {
		v := obj(b)
		if action == ActApproval {
			v = obj(&runs.Obj{Keys: []string{"status", "approval"}, Vals: []runs.Value{runs.StringValue(runs.WaitingForApproval), v}})
		}
		_, err := runs.ParseObserve(v, true, nil)
		return err == nil
	}
	if accepts(body) {
		return body, false, true
	}
	out = &runs.Obj{}
	for i, k := range body.Keys {
		out.Set(k, body.Vals[i])
		if !accepts(out) {
			out.Delete(k)
		}
	}
	return out, true, accepts(out)
}

// placeAnswers moves each answer to its upstream time: the matching
// approval.responded frame, else the first later record the answer wrote.
func (tl *timeline) placeAnswers(l *runLog, answered []int, responded []float64) {
	for k, i := range answered {
		if k < len(responded) {
			tl.answers[k].t = responded[k]
			continue
		}
		for _, o := range l.obs[i:] {
			if o.kind == obsRecord && str(o.body, "last_event") == runs.EventApprovalResponded {
				tl.answers[k].t, _ = num(o.body, "updated_at")
				break
			}
		}
	}
}

// firstRecordTime is the updated_at of the first record after observation i
// with the given status, else def.
func firstRecordTime(l *runLog, i int, status string, def float64) float64 {
	for _, o := range l.obs[i:] {
		if o.kind == obsRecord && str(o.body, "status") == status {
			if t, ok := num(o.body, "updated_at"); ok {
				return t
			}
		}
	}
	return def
}

// deliver reports whether the upstream consumed the client's steers: some
// were accepted and the completed record kept none as pending_steer.
func (tl *timeline) deliver() bool {
	return len(tl.steers) > 0 && tl.final != nil && str(tl.final, "status") == "completed" && !tl.final.Has("pending_steer")
}

// hold keeps a scenario alive: a scenario whose steps have all fired has
// ended, and a stop then no longer starts on_stop. When the client stopped
// the run after the agent's last step and something happened after the stop,
// the list the stop interrupts gets this step, which does nothing visible (steer delivery: no event, no record
// change) and only falls due long after the stop would come. A scenario needs
// one step at least: a run nothing happened to gets this one.
var hold = Step{AfterMs: holdMs, Action: ActDeliverSteers, Body: runs.BoolValue(true)}

// holdMs is the delay of the hold step: one hour.
const holdMs = 3_600_000

// steps lays the changes out as the scenario's lists: in time order, each
// delay counted from the previous step (the first from admission), from the
// client's answer after an approval step, and from the stop for on_stop. A
// deny moves the rest into if_denied, the stop into on_stop. Consecutive
// events within quantum seconds of the first of them become one events step
// (quantum 0: at the same time).
func (tl *timeline) steps(speed, quantum float64) (steps, ifDenied, onStop []Step) {
	sort.SliceStable(tl.changes, func(a, b int) bool {
		if tl.changes[a].t != tl.changes[b].t {
			return tl.changes[a].t < tl.changes[b].t
		}
		return tl.changes[a].order < tl.changes[b].order
	})
	target := &steps
	cur := tl.admitted
	waiting, next, stopDone := false, 0, !tl.stopped
	var lastT float64
	for _, c := range tl.changes {
		if waiting && next < len(tl.answers) && !before(c.t, c.order, tl.answers[next].t, tl.answers[next].order) &&
			(stopDone || before(tl.answers[next].t, tl.answers[next].order, tl.stopAt, tl.stopOrder)) {
			cur, target = tl.answer(next, target, &steps, &ifDenied)
			next++
			waiting = false
		}
		if !stopDone && !before(c.t, c.order, tl.stopAt, tl.stopOrder) {
			if !waiting {
				*target = append(*target, hold)
			}
			stopDone, waiting, cur = true, false, tl.stopAt
			onStop = []Step{}
			target = &onStop
		}
		if n := len(*target); c.step.Action == ActEvents && n > 0 && (*target)[n-1].Action == ActEvents && c.t-lastT <= quantum {
			last := &(*target)[n-1]
			last.Body = runs.ArrayValue(append(append([]runs.Value(nil), last.Body.Arr...), c.step.Body.Arr...)...)
			continue
		}
		s := c.step
		s.AfterMs = delayMs(cur, c.t, speed)
		*target = append(*target, s)
		cur, lastT = c.t, c.t
		waiting = waiting || s.Action == ActApproval
	}
	// What nobody saw happen after a deny or a stop is "nothing happened":
	// an empty list, not the loader's default.
	if waiting && next < len(tl.answers) && (!tl.stopped || before(tl.answers[next].t, tl.answers[next].order, tl.stopAt, tl.stopOrder)) {
		tl.answer(next, target, &steps, &ifDenied)
	}
	if !stopDone {
		onStop = []Step{}
	}
	if len(steps) == 0 {
		steps = []Step{hold}
	}
	return steps, ifDenied, onStop
}

// before reports whether (t1, o1) comes before (t2, o2): earlier, or at the
// same time and seen earlier.
func before(t1 float64, o1 int, t2 float64, o2 int) bool {
	return t1 < t2 || t1 == t2 && o1 < o2
}

// answer applies answer k to a waiting scenario: later delays count from it,
// and a deny moves the rest into if_denied.
func (tl *timeline) answer(k int, target, steps, ifDenied *[]Step) (float64, *[]Step) {
	a := tl.answers[k]
	if a.deny && target == steps {
		*ifDenied = []Step{}
		return a.t, ifDenied
	}
	return a.t, target
}

// trimmed counts the changes written without fields the observe control refuses.
func (tl *timeline) trimmed() int {
	n := 0
	for _, c := range tl.changes {
		if c.trimmed {
			n++
		}
	}
	return n
}
