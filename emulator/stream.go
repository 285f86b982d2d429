package emulator

import (
	"github.com/hermes-emulator/hermes-emulator/faults"
)

// faultFired publishes a fired fault rule of a vendor request on the control
// plane's change stream (GET /__admin/stream): the rule the journal records,
// the operation and the status it answered (0 for a drop or an effect that
// lets the request go on). Delay-only rules are not published, as they are
// never recorded (controls §6.6).
func (s *Server) faultFired(ns, opID string, out faults.Outcome) {
	if out.FaultID == "" && !out.Drop && out.Response == nil {
		return
	}
	status := 0
	if out.Response != nil && !out.Drop {
		status = out.Response.Status
	}
	s.hub.Fault(ns, out.FaultID, opID, status)
}
