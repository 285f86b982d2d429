package runs

// ResolveApprovals applies an answer to a run's pending approval queue (runs-api
// §6.5.2 step 9): with a request_id only the first entry with exactly that id
// (0 or 1; resolve_all is then ignored), else with resolve_all every entry,
// else the oldest one. The queue has n entries, at(i) being entry i, oldest
// first. The resolved entries are always one run of the queue, [from, to):
// to-from were resolved, the others stay pending in order.
func ResolveApprovals(n int, at func(i int) *Obj, a *ApprovalAnswer) (from, to int) {
	switch {
	case n == 0:
		return 0, 0
	case a.HasRequestID:
		if i := FindApproval(n, at, a.RequestID); i >= 0 {
			return i, i + 1
		}
		return 0, 0
	case a.ResolveAll:
		return 0, n
	default:
		return 0, 1
	}
}

// FindApproval is the index of the first of a run's n pending approvals
// (at(i) being entry i, oldest first) whose request_id is exactly requestID,
// or -1: what a RunApproval with a request_id resolves (runs-api §6.5.2 step
// 9) and what makes an observe's approval request_id a duplicate (controls
// §11.1 step 8).
func FindApproval(n int, at func(i int) *Obj, requestID string) int {
	for i := range n {
		if rid, _ := at(i).Get("request_id"); rid.Kind == String && rid.Str == requestID {
			return i
		}
	}
	return -1
}

// RunNotActive is the 409 for a run whose executor is not in this process
// (runs-api §6.3 step 4, controls §11.2 step 5).
func RunNotActive(runID string) *Error {
	return Hermes("run_not_active", "Run is not active in this gateway process: "+runID)
}

// ErrDeliverTerminal is the 409 of steer delivery on a terminal run (controls §11.3).
var ErrDeliverTerminal = Hermes("mock_terminal_run", "deliver: terminal runs cannot be changed")
