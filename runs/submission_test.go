package runs

import (
	"strings"
	"testing"
)

const (
	testRunID = "run_4e685a726271445348426a4a70783364"
	testBase  = 1700000000.0
)

// mustParse parses JSON text with the package parser or fails the test.
func mustParse(t *testing.T, s string) Value {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return v
}

// render renders an object as compact vendor JSON.
func render(o *Obj) string { return string(MarshalValue(ObjectValue(o))) }

// errText summarises an error as "status code message" for table comparisons.
func errText(e *Error) string {
	if e == nil {
		return "<nil>"
	}
	return strings.Join([]string{itoa(int64(e.Status)), e.Code, e.Message}, "|")
}

func TestValidateSubmissionErrors(t *testing.T) {
	const (
		missing    = "400||Missing 'input' field"
		noMessage  = "400||No user message found in input"
		nonObject  = "501|operation_not_implemented|Mockingbird: non-object submission roots are outside the verified subset"
		malformed  = "501|operation_not_implemented|Mockingbird: malformed input elements are outside the verified subset"
		hostedRoom = "501|operation_not_implemented|Mockingbird: hosted-room dispatch is outside the peer-run subset"
	)
	cases := []struct {
		body string
		want string
	}{
		// acceptance 6
		{`{}`, missing},
		{`{"input":[]}`, missing},
		{`{"input":{}}`, missing},
		{`{"input":""}`, missing},
		{`{"input":0}`, missing},
		{`{"input":null}`, missing},
		{`{"input":false}`, missing},
		{`{"input":0.0}`, missing},
		// acceptance 7
		{`{"input":1}`, noMessage},
		{`{"input":{"a":1}}`, noMessage},
		{`{"input":[{"role":"user","content":""}]}`, noMessage},
		{`{"input":[{"role":"user"}]}`, noMessage},
		{`{"input":true}`, noMessage},
		// acceptance 8
		{`{"input":"ok","conversation_history":"bad"}`, "400||'conversation_history' must be an array of message objects"},
		{`{"input":"ok","conversation_history":{"role":"u"}}`, "400||'conversation_history' must be an array of message objects"},
		// acceptance 9
		{`{"input":"ok","conversation_history":[{}]}`, "400||conversation_history[0] must have 'role' and 'content' fields"},
		{`{"input":"ok","conversation_history":[{"role":"u","content":"c"},{"role":"u"}]}`, "400||conversation_history[1] must have 'role' and 'content' fields"},
		{`{"input":"ok","conversation_history":[{"role":"u","content":"c"},[],{"content":1}]}`, "400||conversation_history[1] must have 'role' and 'content' fields"},
		// acceptance 12
		{`null`, nonObject},
		{`[]`, nonObject},
		{`"x"`, nonObject},
		{`1`, nonObject},
		// acceptance 13
		{`{"input":[null]}`, malformed},
		{`{"input":["text"]}`, malformed},
		{`{"input":[{"role":"user","content":"ok"},"last"]}`, malformed},
		// acceptance 14
		{`{"input":"x","hosted_room_dispatch":{}}`, hostedRoom},
		{`{"input":"x","_room_execution_policy":null}`, hostedRoom},
		// order: root, hosted room, input, elements, message, history
		{`{"hosted_room_dispatch":1}`, hostedRoom},
		{`{"input":[null],"conversation_history":"bad"}`, malformed},
		{`{"input":[{"content":""}],"conversation_history":"bad"}`, noMessage},
		{`{"conversation_history":"bad"}`, missing},
	}
	for _, c := range cases {
		s, err := ValidateSubmission(mustParse(t, c.body))
		if got := errText(err); got != c.want {
			t.Errorf("ValidateSubmission(%s) = %s, want %s", c.body, got, c.want)
		}
		if err != nil && s != nil {
			t.Errorf("ValidateSubmission(%s) returned a submission with an error", c.body)
		}
		if err != nil && err.Status == 400 && err.Envelope != EnvHermes {
			t.Errorf("ValidateSubmission(%s) envelope %v, want Hermes", c.body, err.Envelope)
		}
	}
}

func TestValidateSubmissionAccepts(t *testing.T) {
	for _, body := range []string{
		`{"input":"synthetic"}`,
		// acceptance 4: last element's role unchecked, history values unchecked
		`{"input":[{"role":"assistant","content":"synthetic text"}],"model":"synthetic-model","session_id":"synthetic-session","previous_response_id":"missing-is-ignored","conversation_history":[{"role":1,"content":null}]}`,
		`{"input":[null,{"content":{"a":1}}]}`,
		`{"input":"x","conversation_history":[]}`,
		`{"input":"x","conversation_history":null}`,
		`{"input":"x","conversation_history":""}`,
		`{"input":"x","instructions":1,"provider":[],"model_options":{},"unknown":true}`,
	} {
		if _, err := ValidateSubmission(mustParse(t, body)); err != nil {
			t.Errorf("ValidateSubmission(%s) = %s, want success", body, errText(err))
		}
	}
}

func TestNewRecord(t *testing.T) {
	const prefix = `{"object":"hermes.run","run_id":"` + testRunID + `","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,`
	cases := []struct {
		body string
		tail string // session_id and model
	}{
		// acceptance 3 (key order) and runs-api §4.2 example
		{`{"input":"synthetic"}`, `"session_id":"` + testRunID + `","model":"hermes-agent"}`},
		// acceptance 4
		{`{"input":"x","model":"synthetic-model","session_id":"synthetic-session"}`, `"session_id":"synthetic-session","model":"synthetic-model"}`},
		// acceptance 15: model verbatim whenever the key is present
		{`{"input":"x","model":null}`, `"session_id":"` + testRunID + `","model":null}`},
		{`{"input":"x","model":""}`, `"session_id":"` + testRunID + `","model":""}`},
		{`{"input":"x","model":false}`, `"session_id":"` + testRunID + `","model":false}`},
		{`{"input":"x","model":0}`, `"session_id":"` + testRunID + `","model":0}`},
		{`{"input":"x","model":[]}`, `"session_id":"` + testRunID + `","model":[]}`},
		{`{"input":"x","model":{}}`, `"session_id":"` + testRunID + `","model":{}}`},
		{`{"input":"x","model":"synthetic-model"}`, `"session_id":"` + testRunID + `","model":"synthetic-model"}`},
		// acceptance 16: falsy session_id → run id
		{`{"input":"x","session_id":0}`, `"session_id":"` + testRunID + `","model":"hermes-agent"}`},
		{`{"input":"x","session_id":""}`, `"session_id":"` + testRunID + `","model":"hermes-agent"}`},
		{`{"input":"x","session_id":null}`, `"session_id":"` + testRunID + `","model":"hermes-agent"}`},
		{`{"input":"x","session_id":false}`, `"session_id":"` + testRunID + `","model":"hermes-agent"}`},
		{`{"input":"x","session_id":1.5}`, `"session_id":1.5,"model":"hermes-agent"}`},
		// acceptance 17: numbers echoed as Python values
		{`{"input":"x","session_id":12345678901234567890}`, `"session_id":12345678901234567890,"model":"hermes-agent"}`},
		{`{"input":"x","session_id":1.0}`, `"session_id":1.0,"model":"hermes-agent"}`},
		{`{"input":"x","session_id":{"b":1,"a":2}}`, `"session_id":{"b":1,"a":2},"model":"hermes-agent"}`},
	}
	for _, c := range cases {
		s, err := ValidateSubmission(mustParse(t, c.body))
		if err != nil {
			t.Fatalf("ValidateSubmission(%s): %s", c.body, errText(err))
		}
		if got, want := render(NewRecord(testRunID, testBase, s)), prefix+c.tail; got != want {
			t.Errorf("NewRecord(%s)\n got %s\nwant %s", c.body, got, want)
		}
	}
	// acceptance 1: a fractional clock
	got := render(NewRecord(testRunID, 1700000000.125, &Submission{}))
	want := `{"object":"hermes.run","run_id":"` + testRunID + `","status":"queued","updated_at":1700000000.125,"created_at":1700000000.125,"session_id":"` + testRunID + `","model":"hermes-agent"}`
	if got != want {
		t.Errorf("NewRecord at .125\n got %s\nwant %s", got, want)
	}
}
