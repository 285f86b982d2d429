package runs

import (
	"strings"
	"testing"
)

func TestParseApprovalErrors(t *testing.T) {
	const (
		choice  = "400|invalid_approval_choice|Invalid approval choice; expected one of: always, deny, once, session"
		request = "400|invalid_approval_request|Approval request_id is invalid."
		nonObj  = "501|operation_not_implemented|Mockingbird: non-object approval bodies are outside the verified subset"
	)
	cases := []struct {
		body string
		want string
	}{
		// acceptance 122
		{`{"choice":"maybe"}`, choice},
		{`{}`, choice},
		{`{"choice":1}`, choice},
		{`{"choice":null}`, choice},
		{`{"choice":["once"]}`, choice},
		{`{"choice":"onc e"}`, choice},
		{`{"choice":"Approve it"}`, choice},
		// acceptance 123
		{`{"choice":"once","request_id":""}`, request},
		{`{"choice":"once","request_id":"   "}`, request},
		{`{"choice":"once","request_id":"` + strings.Repeat("x", 257) + `"}`, request},
		{`{"choice":"once","request_id":5}`, request},
		{`{"choice":"once","request_id":false}`, request},
		{`{"choice":"once","request_id":"\u3000\u2028"}`, request},
		// acceptance 124: request_id is checked before the choice
		{`{"choice":"bad","request_id":""}`, request},
		{`{"request_id":[]}`, request},
		// acceptance 125 (the parsed part)
		{`[]`, nonObj},
		{`null`, nonObj},
		{`"once"`, nonObj},
	}
	for _, c := range cases {
		a, err := ParseApproval(mustParse(t, c.body))
		if got := errText(err); got != c.want {
			t.Errorf("ParseApproval(%s) = %s, want %s", c.body, got, c.want)
		}
		if a != nil {
			t.Errorf("ParseApproval(%s) returned an answer with an error", c.body)
		}
	}
}

func TestParseApproval(t *testing.T) {
	cases := []struct {
		body       string
		choice     string
		requestID  string // "" = none
		resolveAll bool
	}{
		// acceptance 121
		{`{"choice":"approve"}`, "once", "", false},
		{`{"choice":"approved"}`, "once", "", false},
		{`{"choice":"allow"}`, "once", "", false},
		{`{"choice":" ONCE "}`, "once", "", false},
		{`{"choice":"\tSession\u00a0"}`, "session", "", false},
		{`{"choice":"ALWAYS"}`, "always", "", false},
		{`{"choice":"Deny"}`, "deny", "", false},
		{`{"choice":" Allow "}`, "once", "", false},
		// acceptance 123: null request_id is absent; a valid one is stripped
		{`{"choice":"once","request_id":null}`, "once", "", false},
		{`{"choice":"once","request_id":"  r1 "}`, "once", "r1", false},
		{`{"choice":"once","request_id":"` + strings.Repeat("é", 256) + `"}`, "once", strings.Repeat("é", 256), false},
		{`{"choice":"once","request_id":" ` + strings.Repeat("x", 256) + ` "}`, "once", strings.Repeat("x", 256), false},
		// acceptance 128 and the coerce rules of step 7
		{`{"choice":"once","all":true}`, "once", "", true},
		{`{"choice":"once","resolve_all":"yes"}`, "once", "", true},
		{`{"choice":"once","all":"false"}`, "once", "", false},
		{`{"choice":"once","all":false,"resolve_all":" ON "}`, "once", "", true},
		{`{"choice":"once","all":"1"}`, "once", "", true},
		{`{"choice":"once","all":"TRUE"}`, "once", "", true},
		{`{"choice":"once","all":"y"}`, "once", "", false},
		{`{"choice":"once","all":""}`, "once", "", false},
		{`{"choice":"once","all":null}`, "once", "", false},
		{`{"choice":"once","all":2}`, "once", "", true},
		{`{"choice":"once","all":-0.5}`, "once", "", true},
		{`{"choice":"once","all":0}`, "once", "", false},
		{`{"choice":"once","all":-0.0}`, "once", "", false},
		{`{"choice":"once","all":[1]}`, "once", "", false},
		{`{"choice":"once","all":{"a":1}}`, "once", "", false},
		{`{"choice":"once","resolve_all":1e-999}`, "once", "", false},
	}
	for _, c := range cases {
		a, err := ParseApproval(mustParse(t, c.body))
		if err != nil {
			t.Errorf("ParseApproval(%s) = %s", c.body, errText(err))
			continue
		}
		if a.Choice != c.choice || a.RequestID != c.requestID || a.HasRequestID != (c.requestID != "") || a.ResolveAll != c.resolveAll {
			t.Errorf("ParseApproval(%s) = %+v, want choice %q request_id %q all %v", c.body, *a, c.choice, c.requestID, c.resolveAll)
		}
	}
}

func TestApprovalRespondedEvent(t *testing.T) {
	cases := []struct {
		a        ApprovalAnswer
		resolved int
		want     string
	}{
		{ApprovalAnswer{Choice: "once"}, 1, `{"event":"approval.responded","run_id":"` + testRunID + `","timestamp":1700000000.0,"choice":"once","resolved":1}`},
		// acceptance 127
		{ApprovalAnswer{Choice: "deny", RequestID: "r2", HasRequestID: true}, 1, `{"event":"approval.responded","run_id":"` + testRunID + `","timestamp":1700000000.0,"choice":"deny","request_id":"r2","resolved":1}`},
		{ApprovalAnswer{Choice: "session", ResolveAll: true}, 2, `{"event":"approval.responded","run_id":"` + testRunID + `","timestamp":1700000000.0,"choice":"session","resolved":2}`},
	}
	for _, c := range cases {
		if got := render(ApprovalRespondedEvent(testRunID, testBase, &c.a, c.resolved)); got != c.want {
			t.Errorf("ApprovalRespondedEvent(%+v)\n got %s\nwant %s", c.a, got, c.want)
		}
	}
}

func TestApprovalErrors(t *testing.T) {
	cases := []struct {
		err  *Error
		want string
	}{
		{ApprovalNotActive("run_x"), "409|approval_not_active|Run has no active approval session: run_x"},
		{ApprovalNotPending("run_x"), "409|approval_not_pending|Run has no pending approval: run_x"},
		{SteerNotAccepting("run_x"), "409|run_not_accepting_steer|Run is not currently accepting steer input: run_x"},
		{SteerRefused("run_x"), "409|steer_not_accepted|Run did not accept steer text: run_x"},
	}
	for _, c := range cases {
		if got := errText(c.err); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}
