package runs

import (
	"strings"
	"testing"
)

func TestParseEventsErrors(t *testing.T) {
	const shape = `400||events: expected {"events":[...]} with at least one event`
	cases := []struct {
		body string
		want string
	}{
		// acceptance 111
		{`{"events":[]}`, shape},
		{`{"events":[{"event":"run.completed"}]}`, "400||events[0]: unsupported event"},
		{`{"events":[{"event":"message.delta","delta":1}]}`, "400||events[0]: delta must be a string"},
		{`{"events":[{"event":"tool.started","tool":"t","x":1}]}`, "400||events[0]: unsupported field"},
		// shape
		{`[]`, shape},
		{`{}`, shape},
		{`{"events":{}}`, shape},
		{`{"events":null}`, shape},
		{`{"events":[{"event":"message.delta","delta":"d"}],"x":1}`, shape},
		{`{"event":[{"event":"message.delta","delta":"d"}]}`, shape},
		// unsupported event
		{`{"events":[1]}`, "400||events[0]: unsupported event"},
		{`{"events":[{"delta":"d"}]}`, "400||events[0]: unsupported event"},
		{`{"events":[{"event":null}]}`, "400||events[0]: unsupported event"},
		{`{"events":[{"event":"approval.request"}]}`, "400||events[0]: unsupported event"},
		{`{"events":[{"event":"message.delta","delta":"ok"},{"event":"run.steered"}]}`, "400||events[1]: unsupported event"},
		// unsupported field wins over types
		{`{"events":[{"event":"message.delta","delta":1,"preview":null}]}`, "400||events[0]: unsupported field"},
		{`{"events":[{"event":"reasoning.available","delta":"x"}]}`, "400||events[0]: unsupported field"},
		{`{"events":[{"event":"subagent.start","tool":"x"}]}`, "400||events[0]: unsupported field"},
		// types, missing required fields, table input order
		{`{"events":[{"event":"message.delta"}]}`, "400||events[0]: delta must be a string"},
		{`{"events":[{"event":"tool.started"}]}`, "400||events[0]: tool must be a string"},
		{`{"events":[{"event":"tool.started","preview":1}]}`, "400||events[0]: tool must be a string"},
		{`{"events":[{"event":"tool.started","tool":"t","preview":1}]}`, "400||events[0]: preview must be a string or null"},
		{`{"events":[{"event":"tool.completed","tool":null}]}`, "400||events[0]: tool must be a string"},
		{`{"events":[{"event":"tool.completed","tool":"t","error":0,"duration":"1"}]}`, "400||events[0]: duration must be a number"},
		{`{"events":[{"event":"tool.completed","tool":"t","duration":true}]}`, "400||events[0]: duration must be a number"},
		{`{"events":[{"event":"tool.completed","tool":"t","error":null}]}`, "400||events[0]: error must be a boolean"},
		{`{"events":[{"event":"reasoning.available","text":null}]}`, "400||events[0]: text must be a string"},
		{`{"events":[{"event":"subagent.complete","preview":{}}]}`, "400||events[0]: preview must be a string or null"},
		{`{"events":[{"event":"message.delta","delta":"ok"},{"event":"tool.started","tool":"t"},{"event":"message.delta","delta":[]}]}`, "400||events[2]: delta must be a string"},
	}
	for _, c := range cases {
		evs, err := ParseEvents(mustParse(t, c.body), true)
		if got := errText(err); got != c.want {
			t.Errorf("ParseEvents(%s) = %s, want %s", c.body, got, c.want)
		}
		if evs != nil {
			t.Errorf("ParseEvents(%s) returned events with an error", c.body)
		}
	}
	if _, err := ParseEvents(Value{}, false); errText(err) != shape {
		t.Errorf("ParseEvents(no body) = %s", errText(err))
	}
	if e := ErrEventsTerminal; e.Status != 409 || e.Code != "mock_terminal_run" || e.Message != "events: terminal runs cannot be changed" {
		t.Errorf("ErrEventsTerminal = %s", errText(e))
	}
}

func TestBuildEvents(t *testing.T) {
	const env = `{"event":"%s","run_id":"` + testRunID + `","timestamp":1700000000.0`
	ev := func(name, tail string) string { return strings.Replace(env, "%s", name, 1) + tail + "}" }
	text600 := strings.Repeat("é", 599) + "x"
	cases := []struct {
		in   string
		want string
	}{
		{`{"delta":"caf\u00e9 \ud83d\ude00","event":"message.delta"}`, ev("message.delta", `,"delta":"café 😀"`)},
		{`{"event":"tool.started","tool":"terminal","preview":"ls -la"}`, ev("tool.started", `,"tool":"terminal","preview":"ls -la"`)},
		{`{"preview":null,"tool":"terminal","event":"tool.started"}`, ev("tool.started", `,"tool":"terminal","preview":null`)},
		{`{"event":"tool.started","tool":"terminal"}`, ev("tool.started", `,"tool":"terminal","preview":null`)},
		// acceptance 108
		{`{"event":"tool.completed","tool":"t","duration":0.7639}`, ev("tool.completed", `,"tool":"t","duration":0.764,"error":false`)},
		{`{"event":"tool.completed","tool":"t","duration":1}`, ev("tool.completed", `,"tool":"t","duration":1,"error":false`)},
		{`{"event":"tool.completed","tool":"t","duration":1.0}`, ev("tool.completed", `,"tool":"t","duration":1.0,"error":false`)},
		{`{"event":"tool.completed","tool":"t"}`, ev("tool.completed", `,"tool":"t","duration":0,"error":false`)},
		{`{"error":true,"duration":12345678901234567890,"event":"tool.completed","tool":"t"}`, ev("tool.completed", `,"tool":"t","duration":12345678901234567890,"error":true`)},
		// the exact binary value is rounded, ties to even: 0.0625 and 0.1875 are exact
		// ties (→ 0.062, 0.188); 1.0005 is just below its tie (→ 1.0), 2.0005 just above (→ 2.001)
		{`{"event":"tool.completed","tool":"t","duration":0.0625}`, ev("tool.completed", `,"tool":"t","duration":0.062,"error":false`)},
		{`{"event":"tool.completed","tool":"t","duration":0.1875}`, ev("tool.completed", `,"tool":"t","duration":0.188,"error":false`)},
		{`{"event":"tool.completed","tool":"t","duration":1.0005}`, ev("tool.completed", `,"tool":"t","duration":1.0,"error":false`)},
		{`{"event":"tool.completed","tool":"t","duration":2.0005}`, ev("tool.completed", `,"tool":"t","duration":2.001,"error":false`)},
		{`{"event":"tool.completed","tool":"t","duration":-0.0001}`, ev("tool.completed", `,"tool":"t","duration":-0.0,"error":false`)},
		{`{"event":"tool.completed","tool":"t","duration":1e20}`, ev("tool.completed", `,"tool":"t","duration":1e+20,"error":false`)},
		{`{"event":"tool.completed","tool":"t","duration":1e999}`, ev("tool.completed", `,"tool":"t","duration":Infinity,"error":false`)},
		// acceptance 109
		{`{"event":"reasoning.available","text":"` + text600 + `"}`, ev("reasoning.available", `,"text":"`+strings.Repeat("é", 500)+`"`)},
		{`{"event":"reasoning.available"}`, ev("reasoning.available", `,"text":""`)},
		// acceptance 110
		{`{"event":"subagent.start","preview":null,"goal":"g","depth":2,"model":null}`, ev("subagent.start", `,"goal":"g","depth":2`)},
		{`{"output_tail":"o","event":"subagent.complete","cost_usd":0.5,"preview":"p","goal":{"b":1,"a":[]},"task_count":3,"status":false}`,
			ev("subagent.complete", `,"preview":"p","goal":{"b":1,"a":[]},"task_count":3,"status":false,"cost_usd":0.5,"output_tail":"o"`)},
	}
	for _, c := range cases {
		body := `{"events":[` + c.in + `]}`
		evs, err := ParseEvents(mustParse(t, body), true)
		if err != nil {
			t.Fatalf("ParseEvents(%s): %s", body, errText(err))
		}
		in := render(evs[0].In)
		if got := render(evs[0].Build(testRunID, testBase)); got != c.want {
			t.Errorf("Build(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
		if render(evs[0].In) != in {
			t.Errorf("Build(%s) modified its input", c.in)
		}
	}
}

// acceptance 103 and wire.md §7: the SSE rendering of a built event.
func TestBuildEventPythonRendering(t *testing.T) {
	evs, err := ParseEvents(mustParse(t, `{"events":[{"event":"message.delta","delta":"café 😀"},{"event":"tool.completed","tool":"terminal","duration":0.764}]}`), true)
	if err != nil {
		t.Fatal(errText(err))
	}
	want := []string{
		`{"event": "message.delta", "run_id": "run_4e685a726271445348426a4a70783364", "timestamp": 1700000000.0, "delta": "caf\u00e9 \ud83d\ude00"}`,
		`{"event": "tool.completed", "run_id": "run_4e685a726271445348426a4a70783364", "timestamp": 1700000000.0, "tool": "terminal", "duration": 0.764, "error": false}`,
	}
	for i, e := range evs {
		if got := string(AppendPython(nil, ObjectValue(e.Build(testRunID, testBase)))); got != want[i] {
			t.Errorf("event %d\n got %s\nwant %s", i, got, want[i])
		}
	}
}

func TestEventEnvelope(t *testing.T) {
	want := `{"event":"run.steered","run_id":"` + testRunID + `","timestamp":1700000000.125}`
	if got := render(Event(EventRunSteered, testRunID, 1700000000.125)); got != want {
		t.Errorf("Event = %s, want %s", got, want)
	}
}
