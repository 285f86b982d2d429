package runs

import "strconv"

// Submission is what the run record needs from a valid RunCreate body
// (runs-api §4.1): the session_id and model values and whether their keys were present.
type Submission struct {
	SessionID  Value
	HasSession bool
	Model      Value
	HasModel   bool
	// Message is the user message admission extracted (step 9.4): the string
	// input, or the content of the last element of a message list.
	Message Value
}

// Submission 501 details (runs-api §6.8).
const (
	detailNonObjectRoot   = "non-object submission roots are outside the verified subset"
	detailHostedRoom      = "hosted-room dispatch is outside the peer-run subset"
	detailMalformedInput  = "malformed input elements are outside the verified subset"
	msgMissingInput       = "Missing 'input' field"
	msgNoUserMessage      = "No user message found in input"
	msgHistoryNotArray    = "'conversation_history' must be an array of message objects"
	msgHistoryElementTail = " must have 'role' and 'content' fields"
)

// ValidateSubmission runs the body validation of runs-api §6.1 step 9 on a parsed
// body, in the spec's order (first failure wins): non-object root → 501;
// hosted_room_dispatch / _room_execution_policy present → 501; falsy input →
// 400 "Missing 'input' field"; an array input whose last element is not a plain
// object → 501; falsy message → 400 "No user message found in input"; a truthy
// conversation_history that is not an array, or whose element i is not an object
// with both "role" and "content" → 400. All 400s have code null. Other fields are
// accepted unchecked. body is not modified.
func ValidateSubmission(body Value) (*Submission, *Error) {
	if body.Kind != Object {
		return nil, Unsupported(detailNonObjectRoot)
	}
	o := body.Obj
	if o.Has("hosted_room_dispatch") || o.Has("_room_execution_policy") {
		return nil, Unsupported(detailHostedRoom)
	}
	input, _ := o.Get("input")
	if !input.Truthy() {
		return nil, Hermes("", msgMissingInput)
	}
	var message Value
	switch input.Kind {
	case String:
		message = input
	case Array:
		last := input.Arr[len(input.Arr)-1]
		if last.Kind != Object {
			return nil, Unsupported(detailMalformedInput)
		}
		if c, ok := last.Obj.Get("content"); ok {
			message = c
		} else {
			message = StringValue("")
		}
	default:
		message = StringValue("")
	}
	if !message.Truthy() {
		return nil, Hermes("", msgNoUserMessage)
	}
	if h, _ := o.Get("conversation_history"); h.Truthy() {
		if h.Kind != Array {
			return nil, Hermes("", msgHistoryNotArray)
		}
		for i, e := range h.Arr {
			if e.Kind != Object || !e.Obj.Has("role") || !e.Obj.Has("content") {
				return nil, Hermes("", "conversation_history["+strconv.Itoa(i)+"]"+msgHistoryElementTail)
			}
		}
	}
	s := &Submission{Message: message}
	s.SessionID, s.HasSession = o.Get("session_id")
	s.Model, s.HasModel = o.Get("model")
	return s, nil
}
