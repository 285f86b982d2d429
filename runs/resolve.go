package runs

// ResolveApprovals applies an answer to a run's pending approval queue (runs-api
// §6.5.2 step 9): with a request_id only the entry with exactly that id (0 or
// 1; resolve_all is then ignored), else with resolve_all every entry, else the
// oldest one. It returns the entries that stay pending, in order, and how many
// were resolved. queue is not modified.
func ResolveApprovals(queue []*Obj, a *ApprovalAnswer) (keep []*Obj, resolved int) {
	for i, e := range queue {
		var hit bool
		switch {
		case a.HasRequestID:
			rid, _ := e.Get("request_id")
			hit = resolved == 0 && rid.Kind == String && rid.Str == a.RequestID
		case a.ResolveAll:
			hit = true
		default:
			hit = i == 0
		}
		if hit {
			resolved++
			continue
		}
		keep = append(keep, e)
	}
	return keep, resolved
}

// RunNotActive is the 409 for a run whose executor is not in this process
// (runs-api §6.3 step 4, controls §11.2 step 5).
func RunNotActive(runID string) *Error {
	return Hermes("run_not_active", "Run is not active in this gateway process: "+runID)
}

// ErrDeliverTerminal is the 409 of steer delivery on a terminal run (controls §11.3).
var ErrDeliverTerminal = Hermes("mock_terminal_run", "deliver: terminal runs cannot be changed")
