package runs

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// Fuzz targets for the decoders of the admin and run-control payloads: observe
// (controls §11.1), scripted events (§11.2), steer text (runs-api §6.6) and the
// approval answer (runs-api §6.5.2). Each target parses arbitrary bytes with
// Parse, feeds the value to the decoder twice and checks that it never panics,
// is deterministic, does not modify its input, and that its result or error
// keeps the contract (status, envelope, message family, normalised fields).

var decoderSeeds = []string{
	`{"status":"running"}`,
	`{"status":"completed","output":"x","usage":{"input_tokens":1,"output_tokens":2.0,"total_tokens":2e0},"pending_steer":"s"}`,
	`{"status":"waiting_for_approval","approval":{"command":"rm","request_id":" r ","smart_denied":1,"allow_session":false}}`,
	`{"status":"failed","error":"boom","last_event":"x"}`,
	`{"status":"interrupted","run_id":"x"}`,
	`{"status":"completed","usage":{"input_tokens":-1,"output_tokens":0,"total_tokens":9007199254740992}}`,
	`{"events":[{"event":"tool.started","tool":"terminal","preview":"ls"},{"event":"tool.completed","tool":"t","duration":0.7639,"error":false},{"event":"message.delta","delta":"d"}]}`,
	`{"events":[{"event":"subagent.start","preview":null,"goal":{"a":[1]},"depth":2},{"event":"reasoning.available","text":"` + strings.Repeat("é", 600) + `"}]}`,
	`{"events":[]}`,
	`{"events":[1]}`,
	`{"input":"  steer  "}`,
	`{"input":"","message":["a",{"type":"text","text":"b"},[["c"]],{"type":"image"}]}`,
	`{"text":{"x":1}}`,
	`{"choice":" Approve ","request_id":"r","all":"yes"}`,
	`{"choice":"deny","request_id":"","resolve_all":1}`,
	`{"choice":"session","request_id":null,"all":[1]}`,
	`["not","an","object"]`,
	`null`,
	`{}`,
}

func addDecoderSeeds(f *testing.F) {
	for _, s := range decoderSeeds {
		f.Add([]byte(s))
	}
}

// fuzzValue parses in; it reports false when in is not JSON (decoders only see
// parsed values; the unparseable case is the caller's ErrInvalidJSON).
func fuzzValue(in []byte) (Value, bool) {
	v, err := Parse(in)
	return v, err == nil
}

// sameErr compares two decoder errors by every field.
func sameErr(t *testing.T, a, b *Error) {
	t.Helper()
	if (a == nil) != (b == nil) || (a != nil && *a != *b) {
		t.Fatalf("decoder not deterministic: %v vs %v", a, b)
	}
}

func FuzzParseObserve(f *testing.F) {
	addDecoderSeeds(f)
	base, err := ParseStored([]byte(`{"object":"hermes.run","run_id":"run_x","status":"running","updated_at":1.0,"created_at":1.0,"session_id":"run_x","model":"hermes-agent","approval":{"a":1}}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, ok := fuzzValue(in)
		if !ok {
			if _, e := ParseObserve(Value{}, false, nil); e == nil || e.Message != msgObserveStatus {
				t.Fatalf("no body: %v", e)
			}
			return
		}
		before := MarshalValue(v)
		pending := func(id string) bool { return id == "pending" }
		o1, e1 := ParseObserve(v, true, pending)
		o2, e2 := ParseObserve(v, true, pending)
		sameErr(t, e1, e2)
		if !bytes.Equal(MarshalValue(v), before) {
			t.Fatalf("ParseObserve modified its input %s", before)
		}
		if e1 != nil {
			if e1.Status != 400 || e1.Envelope != EnvHermes || e1.Code != "" || !strings.HasPrefix(e1.Message, observeMessagePrefix) {
				t.Fatalf("observe error outside the contract: %+v", e1)
			}
			return
		}
		if !reflect.DeepEqual(o1, o2) {
			t.Fatalf("ParseObserve not deterministic on %s", in)
		}
		if !ValidStatus(o1.Status) || o1.Body != v.Obj {
			t.Fatalf("observe result: %+v", o1)
		}
		if o1.HasRequestID && (o1.ApprovalRequestID == "" || o1.ApprovalRequestID == "pending" ||
			PyStrip(o1.ApprovalRequestID) != o1.ApprovalRequestID || CodePoints(o1.ApprovalRequestID) > maxRequestIDLength) {
			t.Fatalf("request_id %q accepted", o1.ApprovalRequestID)
		}
		var approval *Obj
		if o1.Status == WaitingForApproval {
			approval = ApprovalEvent(o1.Approval, "run_x", 2, func() string { return "generated" })
		}
		recBefore := MarshalValue(base)
		rec := ApplyObserve(base.Obj, o1, 2, approval, []string{"q1", "q2"})
		if !bytes.Equal(MarshalValue(base), recBefore) {
			t.Fatal("ApplyObserve modified the record")
		}
		if RecordStatus(rec) != o1.Status || rec.Has("approval") != (o1.Status == WaitingForApproval) {
			t.Fatalf("applied record %s for %s", MarshalValue(ObjectValue(rec)), o1.Status)
		}
		out := MarshalValue(ObjectValue(rec))
		back, err := ParseStored(out)
		if err != nil || !bytes.Equal(MarshalValue(back), out) {
			t.Fatalf("applied record %s does not round-trip: %v", out, err)
		}
		ev := TerminalEvent(rec, "run_x", 2)
		if (ev != nil) != (IsTerminal(o1.Status) && o1.Status != Interrupted) {
			t.Fatalf("terminal event for %s: %v", o1.Status, ev)
		}
	})
}

func FuzzParseEvents(f *testing.F) {
	addDecoderSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		v, ok := fuzzValue(in)
		if !ok {
			if _, e := ParseEvents(Value{}, false); e == nil || e.Message != msgEventsShape {
				t.Fatalf("no body: %v", e)
			}
			return
		}
		before := MarshalValue(v)
		s1, e1 := ParseEvents(v, true)
		s2, e2 := ParseEvents(v, true)
		sameErr(t, e1, e2)
		if !bytes.Equal(MarshalValue(v), before) {
			t.Fatalf("ParseEvents modified its input %s", before)
		}
		if e1 != nil {
			if e1.Status != 400 || e1.Envelope != EnvHermes || e1.Code != "" ||
				(e1.Message != msgEventsShape && !strings.HasPrefix(e1.Message, "events[")) {
				t.Fatalf("events error outside the contract: %+v", e1)
			}
			return
		}
		if !reflect.DeepEqual(s1, s2) {
			t.Fatalf("ParseEvents not deterministic on %s", in)
		}
		list, _ := v.Obj.Get("events")
		if len(s1) == 0 || len(s1) != len(list.Arr) {
			t.Fatalf("%d events decoded from %d", len(s1), len(list.Arr))
		}
		for i, ev := range s1 {
			if _, known := eventFields[ev.Name]; !known || ev.In != list.Arr[i].Obj {
				t.Fatalf("event %d: %+v", i, ev)
			}
		}
	})
}

func FuzzSteerText(f *testing.F) {
	addDecoderSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		v, ok := fuzzValue(in)
		if !ok {
			v = ObjectValue(&Obj{}) // the caller's stand-in for an unparseable body
		}
		before := MarshalValue(v)
		s1, e1 := SteerText(v)
		s2, e2 := SteerText(v)
		sameErr(t, e1, e2)
		if !bytes.Equal(MarshalValue(v), before) {
			t.Fatalf("SteerText modified its input %s", before)
		}
		if s1 != s2 {
			t.Fatalf("SteerText not deterministic: %q vs %q", s1, s2)
		}
		if e1 != nil {
			ok := (e1.Status == 400 && e1.Code == "invalid_steer_input" && e1.Message == msgSteerMissing) ||
				(e1.Status == 501 && e1.Envelope == EnvUnsupported && e1.Message == "Mockingbird: "+detailSteerNonText)
			if !ok || s1 != "" {
				t.Fatalf("steer error outside the contract: %+v (%q)", e1, s1)
			}
			return
		}
		if s1 == "" || PyStrip(s1) != s1 || CodePoints(s1) > maxSteerText {
			t.Fatalf("steer text %q not normalised", s1)
		}
	})
}

func FuzzParseApproval(f *testing.F) {
	addDecoderSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		v, ok := fuzzValue(in)
		if !ok {
			return
		}
		before := MarshalValue(v)
		a1, e1 := ParseApproval(v)
		a2, e2 := ParseApproval(v)
		sameErr(t, e1, e2)
		if !bytes.Equal(MarshalValue(v), before) {
			t.Fatalf("ParseApproval modified its input %s", before)
		}
		if e1 != nil {
			switch {
			case v.Kind != Object:
				if e1.Status != 501 || e1.Message != "Mockingbird: "+detailNonObjectApproval {
					t.Fatalf("non-object approval: %+v", e1)
				}
			case e1.Status != 400 || (e1.Code != "invalid_approval_request" && e1.Code != "invalid_approval_choice"):
				t.Fatalf("approval error outside the contract: %+v", e1)
			}
			return
		}
		if v.Kind != Object || !reflect.DeepEqual(a1, a2) {
			t.Fatalf("ParseApproval accepted %s / not deterministic", in)
		}
		switch a1.Choice {
		case "once", "session", "always", "deny":
		default:
			t.Fatalf("choice %q accepted", a1.Choice)
		}
		if a1.HasRequestID && (a1.RequestID == "" || PyStrip(a1.RequestID) != a1.RequestID || CodePoints(a1.RequestID) > maxRequestIDLength) {
			t.Fatalf("request_id %q accepted", a1.RequestID)
		}
	})
}
