package record

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/control"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// The acceptance test of docs/record.md: a session recorded through the
// proxy — an approval answered once, a steer then a stop, a denied approval,
// pending steer text — written, validated by the scenario loader and loaded
// into a second emulator, gives the same client the same answers (statuses,
// records, approval, steer and stop answers, every SSE frame) when nothing
// but the scenarios moves the runs. Both emulators' clocks are frozen at the
// same instant and advanced alike, so even ids and timestamps match.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		view func(string) string // what must be equal in each answer
	}{
		{"input", Options{}, func(s string) string { return s }},
		{"order", Options{Match: MatchOrder}, func(s string) string { return s }},
		// redacted texts differ; the statuses and the event names do not
		{"redacted", Options{Redact: true}, func(s string) string { return strings.Join(names.FindAllString(s, -1), " ") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.opts)
			session(r)
			replay, _ := replayOf(t, r)
			session(replay)
			if len(replay.said) != len(r.said) {
				t.Fatalf("%d answers on replay, %d recorded", len(replay.said), len(r.said))
			}
			for i := range r.said {
				if c.view(replay.said[i]) != c.view(r.said[i]) {
					t.Errorf("answer %d:\nrecorded %s\nreplayed %s", i, r.said[i], replay.said[i])
				}
			}
		})
	}
}

// replayOf loads the file r recorded, which must load, into a new emulator
// whose clock is frozen as r's was, and returns a rig on it and the file.
func replayOf(t *testing.T, r *rig) (*rig, []byte) {
	t.Helper()
	data, _ := r.rec.Scenarios()
	set, perr := scenarios.Parse(data)
	if perr != nil {
		t.Fatalf("the written file does not load: %s\n%s", perr.Message, data)
	}
	up := emulatortest.New(t, emulator.Options{ClockStart: t0, FreezeClock: true, Scenarios: set})
	return &rig{t: t, up: up, ctl: control.New(up.URL()), base: up.URL(), replay: true}, data
}

// names finds the status and event names in an answer.
var names = regexp.MustCompile(`"(status|event)": ?"[a-z_.]+"`)

// Every golden file is a valid scenario set.
func TestGoldenFilesLoad(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) < 3 {
		t.Fatalf("golden files: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		set, perr := scenarios.Parse(data)
		if perr != nil {
			t.Errorf("%s: %s", f, perr.Message)
			continue
		}
		if len(set.Scenarios) != 4 {
			t.Errorf("%s: %d scenarios", f, len(set.Scenarios))
		}
	}
}

// A run completed upstream replays to completed: the recorded file loads and
// its scenario selects the replayed run.
//   - lone surrogate: JSON lets a client send "\ud800", and the emulator keeps
//     it (WTF-8); YAML has no way to say one, so the file says U+FFFD for each
//     of its bytes — which is also what the replaying emulator's RE2 match
//     reads there.
//   - non-string session_id: --match order selects a run by its session_id,
//     which the emulator makes the run id unless the client sends a truthy one
//     (runs-api §4.1) — and the scenario's session_id only matches a string. A
//     run whose client sent 42 is matched by its input instead.
func TestCompletedRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name, input, observe string
		opts                 Options
	}{
		{"lone surrogate", `{"input":"a\ud800b"}`, `{"status":"completed","output":"x\ud800y"}`, Options{}},
		{"non-string session_id", `{"input":"count","session_id":42}`, `{"status":"completed","output":"42"}`, Options{Match: MatchOrder}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.opts)
			id := r.create(c.input)
			r.observe(id, c.observe)
			r.poll(id)
			replay, data := replayOf(t, r)
			id = replay.create(c.input)
			replay.advance(0)
			if got := replay.poll(id); got != "completed" {
				t.Errorf("replayed run: %s\n%s", got, data)
			}
		})
	}
}

// The turns of one conversation share the session_id their client sends,
// and each scenario must still select its own turn on replay, in every mode:
// the session_id alone would select the first turn's scenario for all. Their
// messages may have no plain text: content parts are matched by their texts
// joined (what the emulator's match.input reads), a message without a text
// part by the empty text — a first turn without text selected every later
// turn of the conversation.
func TestSharedSessionIDRoundTrip(t *testing.T) {
	turns := []struct{ input, output string }{
		{`{"input":[{"role":"user","content":[{"type":"input_text","text":"look"},{"type":"image_url","image_url":{"url":"data:a"}}]}],"session_id":"chat-1"}`, "1"},
		{`{"input":"second","session_id":"chat-1"}`, "22"},
		{`{"input":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:b"}}]}],"session_id":"chat-1"}`, "333"},
		{`{"input":[{"role":"user","content":"the fourth"}],"session_id":"chat-1"}`, "4444"},
	}
	for _, c := range []struct {
		name  string
		opts  Options
		match []string // each scenario's match line
	}{
		{"input", Options{}, []string{`{"input": "^look$"}`, `{"input": "^second$"}`,
			`{"session_id": "^chat-1$", "input": "^$"}`, `{"input": "^the fourth$"}`}},
		{"order", Options{Match: MatchOrder}, []string{`{"session_id": "^chat-1$", "input": "^look$"}`, `{"session_id": "^chat-1$", "input": "^second$"}`,
			`{"session_id": "^chat-1$", "input": "^$"}`, `{"session_id": "^chat-1$", "input": "^the fourth$"}`}},
		{"order redacted", Options{Match: MatchOrder, Redact: true}, []string{`{"session_id": "^chat-1$", "input": "^(?s:.{4})$"}`, `{"session_id": "^chat-1$", "input": "^(?s:.{6})$"}`,
			`{"session_id": "^chat-1$", "input": "^(?s:.{0})$"}`, `{"session_id": "^chat-1$", "input": "^(?s:.{10})$"}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.opts)
			for _, turn := range turns {
				id := r.create(turn.input)
				r.observe(id, `{"status":"completed","output":"`+turn.output+`"}`)
				r.poll(id)
			}
			replay, data := replayOf(t, r)
			var got []string
			for _, line := range strings.Split(string(data), "\n") {
				if m, ok := strings.CutPrefix(line, "    match: "); ok {
					got = append(got, m)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.match, "\n") {
				t.Errorf("match lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.match, "\n"))
			}
			for i, turn := range turns {
				out := turn.output
				if c.opts.Redact {
					out = strings.Repeat(Placeholder, len(out))
				}
				id := replay.create(turn.input)
				replay.advance(0)
				if a := replay.do("GET", "/v1/runs/"+id, ""); !strings.Contains(a.body, `"output":"`+out+`"`) {
					t.Errorf("replayed turn %d: %s\n%s", i+1, a.body, data)
				}
			}
		})
	}
}
