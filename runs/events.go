package runs

import (
	"math"
	"strconv"
)

// ScriptedEvent is one validated element of the events control body (controls §11.2).
type ScriptedEvent struct {
	// Name is the event name, e.g. "tool.started".
	Name string
	// In is the element as sent (keys "event" and the event's fields).
	In *Obj
}

// Scripted event names (controls §11.2) and other event names of runs-api §6.4.3.
const (
	EventMessageDelta       = "message.delta"
	EventToolStarted        = "tool.started"
	EventToolCompleted      = "tool.completed"
	EventReasoningAvailable = "reasoning.available"
	EventSubagentStart      = "subagent.start"
	EventSubagentComplete   = "subagent.complete"
	EventApprovalRequest    = "approval.request"
	EventApprovalResponded  = "approval.responded"
	EventRunSteered         = "run.steered"
)

// Events control messages (controls §11.2).
const (
	msgEventsShape    = `events: expected {"events":[...]} with at least one event`
	msgEventsTerminal = "events: terminal runs cannot be changed"
	maxReasoningText  = 500
)

// ErrEventsTerminal is the 409 of the events control on a terminal run (controls §11.2 step 4).
var ErrEventsTerminal = Hermes("mock_terminal_run", msgEventsTerminal)

// fieldType is the input type rule of one scripted event field.
type fieldType uint8

const (
	anyValue       fieldType = iota // any JSON value
	stringRequired                  // a string; missing is the wrong type
	stringOrNull                    // optional string or null
	number                          // optional Int or Float
	boolean                         // optional true/false
	stringOptional                  // optional string
)

type eventField struct {
	name string
	typ  fieldType
	msg  string // the type error tail after "events[<i>]: "
}

var (
	fDelta    = eventField{"delta", stringRequired, "delta must be a string"}
	fTool     = eventField{"tool", stringRequired, "tool must be a string"}
	fPreview  = eventField{"preview", stringOrNull, "preview must be a string or null"}
	fDuration = eventField{"duration", number, "duration must be a number"}
	fError    = eventField{"error", boolean, "error must be a boolean"}
	fText     = eventField{"text", stringOptional, "text must be a string"}
)

// subagentFields are the optional any-value fields of subagent events, in output order.
var subagentFields = []string{"goal", "task_count", "task_index", "subagent_id", "child_session_id",
	"delegation_id", "parent_id", "depth", "model", "tool_count", "status", "summary",
	"duration_seconds", "input_tokens", "output_tokens", "reasoning_tokens", "api_calls",
	"cost_usd", "files_read", "files_written", "output_tail"}

// eventFields lists each scriptable event's input fields in the table's order.
var eventFields = func() map[string][]eventField {
	sub := []eventField{fPreview}
	for _, k := range subagentFields {
		sub = append(sub, eventField{name: k, typ: anyValue})
	}
	return map[string][]eventField{
		EventMessageDelta:       {fDelta},
		EventToolStarted:        {fTool, fPreview},
		EventToolCompleted:      {fTool, fDuration, fError},
		EventReasoningAvailable: {fText},
		EventSubagentStart:      sub,
		EventSubagentComplete:   sub,
	}
}()

// fits reports whether v (present or not) satisfies the field type.
func (t fieldType) fits(v Value, present bool) bool {
	switch t {
	case stringRequired:
		return present && v.Kind == String
	case stringOrNull:
		return !present || v.Kind == String || v.Kind == Null
	case number:
		return !present || v.Kind == Int || v.Kind == Float
	case boolean:
		return !present || v.Kind == Bool
	case stringOptional:
		return !present || v.Kind == String
	}
	return true
}

// ParseEvents validates the events control body (controls §11.2 steps 2–3), all
// elements before anything is applied; the first failure wins (400, code null):
// the shape message for anything but {"events":[non-empty]} (also no body), then
// per element i "events[i]: unsupported event", "events[i]: unsupported field",
// and the field type messages in the table's input order. The terminal and
// local-owner checks (steps 4–5) are the caller's. body is not modified.
func ParseEvents(body Value, hasBody bool) ([]ScriptedEvent, *Error) {
	if !hasBody || body.Kind != Object || body.Obj.Len() != 1 {
		return nil, Hermes("", msgEventsShape)
	}
	list, ok := body.Obj.Get("events")
	if !ok || list.Kind != Array || len(list.Arr) == 0 {
		return nil, Hermes("", msgEventsShape)
	}
	out := make([]ScriptedEvent, 0, len(list.Arr))
	for i, el := range list.Arr {
		prefix := "events[" + strconv.Itoa(i) + "]: "
		if el.Kind != Object {
			return nil, Hermes("", prefix+"unsupported event")
		}
		name, _ := el.Obj.Get("event")
		fields, known := eventFields[name.Str]
		if name.Kind != String || !known {
			return nil, Hermes("", prefix+"unsupported event")
		}
		for _, k := range el.Obj.Keys {
			if k != "event" && !hasField(fields, k) {
				return nil, Hermes("", prefix+"unsupported field")
			}
		}
		for _, f := range fields {
			v, present := el.Obj.Get(f.name)
			if !f.typ.fits(v, present) {
				return nil, Hermes("", prefix+f.msg)
			}
		}
		out = append(out, ScriptedEvent{Name: name.Str, In: el.Obj})
	}
	return out, nil
}

func hasField(fields []eventField, k string) bool {
	for _, f := range fields {
		if f.name == k {
			return true
		}
	}
	return false
}

// Event returns the envelope every SSE event starts with (runs-api §6.4.3):
// event, run_id, timestamp = now.
func Event(name, runID string, now float64) *Obj {
	return &Obj{
		Keys: []string{"event", "run_id", "timestamp"},
		Vals: []Value{StringValue(name), StringValue(runID), FloatValue(now)},
	}
}

// Build renders the scripted event as its SSE event object (controls §11.2
// output rules): the envelope, then
//
//   - message.delta: delta;
//   - tool.started: tool, preview (default null);
//   - tool.completed: tool, duration (default Int 0; an Int is kept; a Float is
//     rounded to 3 decimals, correctly rounded with ties to even, and stays a
//     Float), error (default false);
//   - reasoning.available: text (default "") cut to 500 code points;
//   - subagent.start / subagent.complete: preview when not null, then each
//     present, non-null field of the table in its order.
func (e ScriptedEvent) Build(runID string, now float64) *Obj {
	out := Event(e.Name, runID, now)
	in := e.In
	switch e.Name {
	case EventMessageDelta:
		v, _ := in.Get("delta")
		out.Set("delta", v)
	case EventToolStarted:
		tool, _ := in.Get("tool")
		out.Set("tool", tool)
		preview, ok := in.Get("preview")
		if !ok {
			preview = NullValue()
		}
		out.Set("preview", preview)
	case EventToolCompleted:
		tool, _ := in.Get("tool")
		out.Set("tool", tool)
		d, ok := in.Get("duration")
		switch {
		case !ok:
			d = IntValue(0)
		case d.Kind == Float:
			d = FloatValue(round3(d.Float))
		}
		out.Set("duration", d)
		errv, ok := in.Get("error")
		if !ok {
			errv = BoolValue(false)
		}
		out.Set("error", errv)
	case EventReasoningAvailable:
		text := ""
		if v, ok := in.Get("text"); ok {
			text = v.Str
		}
		out.Set("text", StringValue(TruncateCodePoints(text, maxReasoningText)))
	case EventSubagentStart, EventSubagentComplete:
		if v, ok := in.Get("preview"); ok && v.Kind != Null {
			out.Set("preview", v)
		}
		for _, k := range subagentFields {
			if v, ok := in.Get(k); ok && v.Kind != Null {
				out.Set(k, v)
			}
		}
	}
	return out
}

// round3 rounds f to 3 decimal places as Python's round(f, 3): the exact binary
// value is rounded correctly (ties to even) to a decimal, then read back as the
// nearest binary64. strconv's fixed-precision 'f' formatting is exact. Non-finite
// values are returned unchanged.
func round3(f float64) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 3, 64), 64)
	if err != nil {
		return f
	}
	return r
}
