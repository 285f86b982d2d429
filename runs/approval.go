package runs

// ApprovalAnswer is a validated RunApproval body (runs-api §6.5.2 steps 4–7).
type ApprovalAnswer struct {
	// Choice is the normalised choice: once, session, always or deny.
	Choice string
	// RequestID is the Python-stripped request_id when HasRequestID.
	RequestID    string
	HasRequestID bool
	// ResolveAll is coerce(all) OR coerce(resolve_all).
	ResolveAll bool
}

// RunApproval messages (runs-api §6.5.2).
const (
	detailNonObjectApproval = "non-object approval bodies are outside the verified subset"
	msgApprovalRequestID    = "Approval request_id is invalid."
	msgApprovalChoice       = "Invalid approval choice; expected one of: always, deny, once, session"
)

// ApprovalNotActive is the 409 of RunApproval on a run that is not live (runs-api §6.5.2 step 8).
func ApprovalNotActive(runID string) *Error {
	return Hermes("approval_not_active", "Run has no active approval session: "+runID)
}

// ApprovalNotPending is the 409 of RunApproval when nothing was resolved (runs-api §6.5.2 step 9).
func ApprovalNotPending(runID string) *Error {
	return Hermes("approval_not_pending", "Run has no pending approval: "+runID)
}

// ParseApproval runs runs-api §6.5.2 steps 3 (after parsing) to 7 on a parsed
// body: a non-object → 501; the choice is Python-stripped and ASCII-lowercased
// with approve/approved/allow → once (a missing or non-string choice is
// invalid); a present non-null request_id must be a string whose Python-strip is
// non-empty and at most 256 code points → else 400 invalid_approval_request,
// checked before the choice → else 400 invalid_approval_choice; resolve_all is
// coerce(all) OR coerce(resolve_all). An unparseable body is the caller's
// ErrInvalidJSON. body is not modified.
func ParseApproval(body Value) (*ApprovalAnswer, *Error) {
	if body.Kind != Object {
		return nil, Unsupported(detailNonObjectApproval)
	}
	b := body.Obj
	a := &ApprovalAnswer{}
	if c, ok := b.Get("choice"); ok && c.Kind == String {
		a.Choice = lowerASCII(PyStrip(c.Str))
		switch a.Choice {
		case "approve", "approved", "allow":
			a.Choice = "once"
		}
	}
	if r, ok := b.Get("request_id"); ok && r.Kind != Null {
		if r.Kind != String {
			return nil, Hermes("invalid_approval_request", msgApprovalRequestID)
		}
		id := PyStrip(r.Str)
		if id == "" || CodePoints(id) > maxRequestIDLength {
			return nil, Hermes("invalid_approval_request", msgApprovalRequestID)
		}
		a.RequestID, a.HasRequestID = id, true
	}
	switch a.Choice {
	case "once", "session", "always", "deny":
	default:
		return nil, Hermes("invalid_approval_choice", msgApprovalChoice)
	}
	all, _ := b.Get("all")
	resolveAll, _ := b.Get("resolve_all")
	a.ResolveAll = coerceBool(all) || coerceBool(resolveAll)
	return a, nil
}

// coerceBool is the coerce of runs-api §6.5.2 step 7: booleans as is; null (or
// absent) false; strings Python-stripped and lowercased are true for 1, true,
// yes, on; numbers true when non-zero; arrays and objects false.
func coerceBool(v Value) bool {
	switch v.Kind {
	case Bool:
		return v.Bool
	case String:
		switch lowerASCII(PyStrip(v.Str)) {
		case "1", "true", "yes", "on":
			return true
		}
		return false
	case Int, Float:
		return v.Truthy()
	}
	return false
}

// lowerASCII lowercases the ASCII letters A–Z of s and leaves every other byte.
// (No non-ASCII letter lowercases to one of the ASCII words compared here.)
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// ApprovalRespondedEvent builds the approval.responded SSE event (runs-api
// §6.4.3): the envelope, choice, request_id only when the request named one, resolved.
func ApprovalRespondedEvent(runID string, now float64, a *ApprovalAnswer, resolved int) *Obj {
	e := Event(EventApprovalResponded, runID, now)
	e.Set("choice", StringValue(a.Choice))
	if a.HasRequestID {
		e.Set("request_id", StringValue(a.RequestID))
	}
	e.Set("resolved", IntValue(int64(resolved)))
	return e
}
