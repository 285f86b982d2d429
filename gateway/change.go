package gateway

// Change is one state change, for the control-plane stream.
type Change struct {
	Kind                                         string // "run.created" | "run.changed" | "run.removed" | "run.event" | "checkpoint" | "clock"
	Namespace, Branch, RunID, Status, Checkpoint string
	Frame                                        []byte      // for run.event: the SSE frame bytes emitted
	Clock                                        *ClockState // for clock: the clock after the move
}

// changed tells Options.OnChange of c, under the gateway lock, so listeners
// hear changes in commit order and before the request that made them
// answers. Callers hold g.mu.
func (g *Gateway) changed(c Change) {
	if g.listening() {
		g.opts.OnChange(c)
	}
}

// listening reports whether changes are wanted: an OnChange is set and, with
// Options.Listening, someone is there to hear them.
func (g *Gateway) listening() bool {
	return g.opts.OnChange != nil && (g.opts.Listening == nil || g.opts.Listening())
}
