package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

const id = "run_4e685a726271445348426a4a70783364"

// Bodies copied from the spec (runs-api §2, §4.2, §6) with the first run id of the default namespace.
const (
	recQueued    = `{"object":"hermes.run","run_id":"` + id + `","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + id + `","model":"hermes-agent"}`
	recCompleted = `{"object":"hermes.run","run_id":"` + id + `","status":"completed","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + id + `","model":"hermes-agent","last_event":"run.completed","output":"synthetic output","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`
	recHydrated  = `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"` + id + `","session_id":"` + id + `","status":"interrupted","updated_at":1700003600.5,"error":"The gateway restarted before this run settled.","last_event":"run.interrupted"}`
	recWaiting   = `{"object":"hermes.run","run_id":"` + id + `","status":"waiting_for_approval","updated_at":1700000001.25,"created_at":1700000000.0,"session_id":"` + id + `","model":"hermes-agent","last_event":"approval.request","approval":{"command":"synthetic-command","request_id":"4f517459436b5145434675544552396b","event":"approval.request","run_id":"` + id + `","timestamp":1700000001.25,"choices":["once","session","always","deny"]}}`
	recSteer     = `{"object":"hermes.run","run_id":"` + id + `","status":"completed","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":12345678901234567890,"model":null,"output":"","usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5},"last_event":"run.completed","pending_steer":"a\nb"}`

	errInvalidJSON = `{"error":{"message":"Invalid JSON","type":"invalid_request_error","param":null,"code":null}}`
	errMissing     = `{"error":{"message":"Missing 'input' field","type":"invalid_request_error","param":null,"code":null}}`
	errSessionKey  = `{"error":{"message":"Session key too long","type":"invalid_request_error"}}`
	errAuth        = `{"error":{"message":"Invalid gateway API key (API_SERVER_KEY)","type":"gateway_auth_error","code":"gateway_auth_failed"}}`
	errConflict    = `{"error":{"message":"Idempotency-Key was already used with a different request payload","type":"invalid_request_error","param":null,"code":"idempotency_key_conflict"}}`
	errTooLarge    = `{"error":{"message":"Request body too large.","type":"invalid_request_error","param":null,"code":"body_too_large"}}`
	errThrottle    = `{"error":{"message":"Too many concurrent runs (max 2)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`
	errRoot501     = `{"error":{"message":"Mockingbird: non-object submission roots are outside the verified subset","type":"mockingbird_unsupported","param":null,"code":"operation_not_implemented"}}`
	errDraining    = `{"error":{"message":"Gateway is draining existing work; retry shortly.","type":"invalid_request_error","param":null,"code":"gateway_draining"}}`
	errInternal    = `{"error":{"type":"mockingbird_internal","message":"synthetic failure"}}`
	errNotFound    = `{"error":{"message":"Run not found: missing","type":"invalid_request_error","param":null,"code":"run_not_found"}}`
	errNotActive   = `{"error":{"message":"Run is not active in this gateway process: ` + id + `","type":"invalid_request_error","param":null,"code":"run_not_active"}}`
	errChoice      = `{"error":{"message":"Invalid approval choice; expected one of: always, deny, once, session","type":"invalid_request_error","param":null,"code":"invalid_approval_choice"}}`
	errNoPending   = `{"error":{"message":"Run has no pending approval: ` + id + `","type":"invalid_request_error","param":null,"code":"approval_not_pending"}}`
	errApproval501 = `{"error":{"message":"Mockingbird: non-object approval bodies are outside the verified subset","type":"mockingbird_unsupported","param":null,"code":"operation_not_implemented"}}`
	errSteerText   = `{"error":{"message":"Missing non-empty steer text; expected 'input', 'message', or 'text'.","type":"invalid_request_error","param":null,"code":"invalid_steer_input"}}`
	errSteerGate   = `{"error":{"message":"Run is not currently accepting steer input: ` + id + `","type":"invalid_request_error","param":null,"code":"run_not_accepting_steer"}}`
	errSteer501    = `{"error":{"message":"Mockingbird: non-text steer input is outside the verified subset","type":"mockingbird_unsupported","param":null,"code":"operation_not_implemented"}}`

	capabilities = `{"object":"hermes.api_server.capabilities","platform":"hermes-agent","model":"hermes-agent",` +
		`"auth":{"type":"bearer","required":false},` +
		`"runtime":{"mode":"server_agent","tool_execution":"server","split_runtime":false,` +
		`"description":"Emulated Hermes peer-run API: run lifecycles are scripted through /__admin controls; no agent, tool or model runs."},` +
		`"features":{"chat_completions":false,"chat_completions_streaming":false,"responses_api":false,"responses_streaming":false,` +
		`"run_submission":true,"runs_idempotency":{"supported":true,"durable":false,"retention_seconds":86400},` +
		`"run_status":true,"run_events_sse":true,"run_stop":true,"run_steer":true,"run_approval_response":true,` +
		`"tool_progress_events":true,"approval_events":true,"session_key_header":"X-Hermes-Session-Key","cors":false},` +
		`"endpoints":{"runs":{"method":"POST","path":"/v1/runs"},"run_status":{"method":"GET","path":"/v1/runs/{run_id}"},` +
		`"run_events":{"method":"GET","path":"/v1/runs/{run_id}/events"},"run_approval":{"method":"POST","path":"/v1/runs/{run_id}/approval"},` +
		`"run_steer":{"method":"POST","path":"/v1/runs/{run_id}/steer"},"run_stop":{"method":"POST","path":"/v1/runs/{run_id}/stop"}}}`

	sse = "data: {\"event\": \"tool.started\", \"run_id\": \"" + id + "\", \"timestamp\": 1700000000.0, \"tool\": \"terminal\", \"preview\": \"ls -la\"}\n\n: stream closed\n\n"
)

func contract(t testing.TB) *Contract {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// hdr builds a response header; pairs are name, value, name, value, ...
func hdr(pairs ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(pairs); i += 2 {
		h.Add(pairs[i], pairs[i+1])
	}
	return h
}

var jsonCT = []string{"Content-Type", "application/json"}

func withJSON(pairs ...string) http.Header { return hdr(append(slices.Clone(jsonCT), pairs...)...) }

func TestLoad(t *testing.T) {
	c := contract(t)
	again := contract(t)
	if c != again {
		t.Errorf("Load returned two different contracts; want one per process")
	}
	want := []string{"CapabilitiesGet", "RunApproval", "RunCreate", "RunEvents", "RunGet", "RunSteer", "RunStop"}
	if got := c.OperationIDs(); !slices.Equal(got, want) {
		t.Errorf("OperationIDs = %q, want %q", got, want)
	}
	// runs-api §6 statuses, plus 500 everywhere.
	statuses := map[string]string{
		"RunCreate":       "202, 400, 401, 409, 413, 429, 500, 501, 503",
		"RunGet":          "200, 401, 404, 500",
		"RunStop":         "200, 401, 404, 409, 413, 500",
		"RunEvents":       "200, 401, 404, 500",
		"RunApproval":     "200, 400, 401, 404, 409, 413, 500, 501",
		"RunSteer":        "200, 400, 401, 404, 409, 413, 500, 501",
		"CapabilitiesGet": "200, 401, 500",
	}
	for op, want := range statuses {
		if got := c.ops[op].statuses; got != want {
			t.Errorf("%s statuses = %q, want %q", op, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"not yaml", "openapi: [", "api: load openapi.yaml: "},
		{"invalid document", "openapi: 3.0.3\ninfo: {}\npaths: {}\n", "api: invalid openapi.yaml: "},
		{"range status", "openapi: 3.0.3\ninfo: {title: t, version: v}\npaths:\n  /x:\n    get:\n      operationId: X\n      responses:\n        default: {description: d}\n",
			`api: X: response key "default" is not a status code (ranges and default are not supported)`},
		{"no operationId", "openapi: 3.0.3\ninfo: {title: t, version: v}\npaths:\n  /x:\n    get:\n      responses:\n        '200': {description: d}\n",
			"api: GET /x has no operationId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.spec))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("parse error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

// acceptance 21: RunCreate 202, RunGet 200 (queued and completed), RunCreate 400 and 501 and RunGet 404
// conform; so does every other declared status of every operation.
func TestValidateResponseAccepts(t *testing.T) {
	c := contract(t)
	tests := []struct {
		op     string
		status int
		header http.Header
		body   string
	}{
		{"RunCreate", 202, withJSON("X-Mockingbird-Checkpoint", "cp_00000001"), `{"run_id":"` + id + `","status":"started","replayed":false}`},
		{"RunCreate", 202, withJSON("Idempotency-Replayed", "true", "X-Hermes-Session-Key", "memory"), `{"run_id":"` + id + `","status":"interrupted","replayed":true}`},
		{"RunCreate", 400, withJSON(), errInvalidJSON},
		{"RunCreate", 400, withJSON(), errMissing},
		{"RunCreate", 400, withJSON(), errSessionKey},
		{"RunCreate", 401, withJSON(), errAuth},
		{"RunCreate", 409, withJSON(), errConflict},
		{"RunCreate", 413, withJSON(), errTooLarge},
		{"RunCreate", 429, withJSON("Retry-After", "1"), errThrottle},
		{"RunCreate", 501, withJSON(), errRoot501},
		{"RunCreate", 503, withJSON("Retry-After", "1"), errDraining},
		{"RunCreate", 500, withJSON(), errInternal},

		{"RunGet", 200, withJSON(), recQueued},
		{"RunGet", 200, withJSON(), recCompleted},
		{"RunGet", 200, withJSON(), recHydrated},
		{"RunGet", 200, withJSON(), recWaiting},
		{"RunGet", 200, withJSON(), recSteer},
		{"RunGet", 401, withJSON(), errAuth},
		{"RunGet", 404, withJSON(), errNotFound},
		{"RunGet", 500, withJSON(), errInternal},

		{"RunStop", 200, withJSON("X-Mockingbird-Checkpoint", "cp_0000000a"), `{"run_id":"` + id + `","status":"stopping"}`},
		{"RunStop", 200, withJSON(), recCompleted},
		{"RunStop", 200, withJSON(), recHydrated},
		{"RunStop", 401, withJSON(), errAuth},
		{"RunStop", 404, withJSON(), errNotFound},
		{"RunStop", 409, withJSON(), errNotActive},
		{"RunStop", 413, withJSON(), errTooLarge},
		{"RunStop", 500, withJSON(), errInternal},

		{"RunEvents", 200, hdr("Content-Type", "text/event-stream", "Cache-Control", "no-cache", "X-Accel-Buffering", "no"), sse},
		{"RunEvents", 200, hdr("Content-Type", "text/event-stream"), "this is not parsed {"},
		{"RunEvents", 401, withJSON(), errAuth},
		{"RunEvents", 404, withJSON(), errNotFound},
		{"RunEvents", 500, withJSON(), errInternal},

		{"RunApproval", 200, withJSON(), `{"object":"hermes.run.approval_response","run_id":"` + id + `","choice":"once","resolved":1}`},
		{"RunApproval", 200, withJSON(), `{"object":"hermes.run.approval_response","run_id":"` + id + `","choice":"deny","request_id":"4f517459436b5145434675544552396b","resolved":3}`},
		{"RunApproval", 400, withJSON(), errInvalidJSON},
		{"RunApproval", 400, withJSON(), errChoice},
		{"RunApproval", 401, withJSON(), errAuth},
		{"RunApproval", 404, withJSON(), errNotFound},
		{"RunApproval", 409, withJSON(), errNoPending},
		{"RunApproval", 413, withJSON(), errTooLarge},
		{"RunApproval", 501, withJSON(), errApproval501},
		{"RunApproval", 500, withJSON(), errInternal},

		{"RunSteer", 200, withJSON(), `{"object":"hermes.run.steer","run_id":"` + id + `","accepted":true}`},
		{"RunSteer", 400, withJSON(), errSteerText},
		{"RunSteer", 401, withJSON(), errAuth},
		{"RunSteer", 404, withJSON(), errNotFound},
		{"RunSteer", 409, withJSON(), errSteerGate},
		{"RunSteer", 413, withJSON(), errTooLarge},
		{"RunSteer", 501, withJSON(), errSteer501},
		{"RunSteer", 500, withJSON(), errInternal},

		{"CapabilitiesGet", 200, withJSON(), capabilities},
		{"CapabilitiesGet", 200, withJSON(), strings.Replace(strings.Replace(capabilities, `"required":false`, `"required":true`, 1), `"durable":false`, `"durable":true`, 1)},
		{"CapabilitiesGet", 401, withJSON(), errAuth},
		{"CapabilitiesGet", 500, withJSON(), errInternal},

		// wire.md §3.1: echoed non-finite numbers are bare tokens; the body is let through.
		{"RunGet", 200, withJSON(), strings.Replace(recQueued, `"session_id":"`+id+`"`, `"session_id":Infinity`, 1)},
		{"RunGet", 200, withJSON(), strings.Replace(recQueued, `"model":"hermes-agent"`, `"model":[-Infinity,{"x":Infinity}]`, 1)},
		{"RunStop", 200, withJSON(), strings.Replace(recHydrated, `"model":"hermes-agent"`, `"model":-Infinity`, 1)},
		// wire.md §2.2: integers without a digit limit, floats that overflowed while echoing.
		{"RunGet", 200, withJSON(), strings.Replace(recQueued, `"session_id":"`+id+`"`, `"session_id":1`+strings.Repeat("0", 400), 1)},
		{"RunGet", 200, withJSON(), strings.Replace(recQueued, `"model":"hermes-agent"`, `"model":{"a":-1e999,"b":"Infinity"}`, 1)},
	}
	for _, tt := range tests {
		if err := c.ValidateResponse(tt.op, tt.status, tt.header, []byte(tt.body)); err != nil {
			t.Errorf("%s %d %s: %v", tt.op, tt.status, tt.body, err)
		}
	}
}

// A broken response is reported: proves the validation bites.
func TestValidateResponseRejects(t *testing.T) {
	c := contract(t)
	tests := []struct {
		name   string
		op     string
		status int
		header http.Header
		body   string
		want   string // exact error, or its prefix when it ends with "…"
	}{
		{"unknown operation", "RunList", 200, withJSON(), recQueued,
			`api: unknown operationId "RunList"`},
		{"undeclared status", "RunGet", 418, withJSON(), recQueued,
			"api: RunGet: status 418 is not declared (declared: 200, 401, 404, 500)"},
		{"runtime 400 is not a RunGet result", "RunGet", 400, withJSON(), errInvalidJSON,
			"api: RunGet: status 400 is not declared (declared: 200, 401, 404, 500)"},
		{"content type with charset", "RunGet", 200, hdr("Content-Type", "application/json; charset=utf-8"), recQueued,
			`api: RunGet 200: Content-Type "application/json; charset=utf-8" is not declared (want "application/json")`},
		{"no content type", "RunGet", 404, hdr(), errNotFound,
			`api: RunGet 404: Content-Type "" is not declared (want "application/json")`},
		{"json stream", "RunEvents", 200, withJSON(), `{}`,
			`api: RunEvents 200: Content-Type "application/json" is not declared (want "text/event-stream")`},
		{"missing Retry-After", "RunCreate", 429, withJSON(), errThrottle,
			"api: RunCreate 429: required header Retry-After is missing"},
		{"wrong Retry-After", "RunCreate", 503, withJSON("Retry-After", "2"), errDraining,
			"api: RunCreate 503: header Retry-After does not match its schema: …"},
		{"replayed false", "RunCreate", 202, withJSON("Idempotency-Replayed", "false"), `{"run_id":"` + id + `","status":"queued","replayed":true}`,
			"api: RunCreate 202: header Idempotency-Replayed does not match its schema: …"},
		{"bad checkpoint id", "RunStop", 200, withJSON("X-Mockingbird-Checkpoint", "42"), `{"run_id":"` + id + `","status":"stopping"}`,
			"api: RunStop 200: header x-mockingbird-checkpoint does not match its schema: …"},
		{"not JSON", "RunGet", 200, withJSON(), `{"object":`,
			"api: RunGet 200: body is not JSON: unexpected end of JSON input"},
		{"empty body", "RunGet", 404, withJSON(), ``,
			"api: RunGet 404: body is not JSON: unexpected end of JSON input"},
		{"NaN is never sent", "RunGet", 200, withJSON(), strings.Replace(recQueued, `"model":"hermes-agent"`, `"model":NaN`, 1),
			"api: RunGet 200: body is not JSON: invalid character 'N' looking for beginning of value"},
		{"trailing data", "RunGet", 200, withJSON(), recQueued + `{}`,
			"api: RunGet 200: body is not JSON: invalid character '{' after top-level value"},
		{"status is a number", "RunGet", 200, withJSON(), strings.Replace(recQueued, `"status":"queued"`, `"status":5`, 1),
			"api: RunGet 200: body does not match the schema: …"},
		{"unknown status", "RunGet", 200, withJSON(), strings.Replace(recQueued, `"status":"queued"`, `"status":"expired"`, 1),
			"api: RunGet 200: body does not match the schema: …"},
		{"missing run_id", "RunGet", 200, withJSON(), strings.Replace(recQueued, `"run_id":"`+id+`",`, ``, 1),
			"api: RunGet 200: body does not match the schema: …"},
		{"bad run id", "RunGet", 200, withJSON(), strings.Replace(recQueued, `"run_id":"`+id+`"`, `"run_id":"run_1"`, 1),
			"api: RunGet 200: body does not match the schema: …"},
		{"unknown record field", "RunGet", 200, withJSON(), strings.Replace(recQueued, `}`, `,"input":"x"}`, 1),
			"api: RunGet 200: body does not match the schema: …"},
		{"usage without total", "RunGet", 200, withJSON(), strings.Replace(recCompleted, `,"total_tokens":0`, ``, 1),
			"api: RunGet 200: body does not match the schema: …"},
		{"Infinity where a string belongs", "RunGet", 200, withJSON(), strings.Replace(recCompleted, `"output":"synthetic output"`, `"output":Infinity`, 1),
			"api: RunGet 200: body does not match the schema: …"},
		{"Hermes envelope without param", "RunCreate", 400, withJSON(), `{"error":{"message":"Invalid JSON","type":"invalid_request_error","code":null}}`,
			"api: RunCreate 400: body does not match the schema: …"},
		{"auth envelope with param", "RunGet", 401, withJSON(), `{"error":{"message":"Invalid gateway API key (API_SERVER_KEY)","type":"gateway_auth_error","param":null,"code":"gateway_auth_failed"}}`,
			"api: RunGet 401: body does not match the schema: …"},
		{"page not found is not an operation result", "RunGet", 404, withJSON(), `{"message":"page not found"}`,
			"api: RunGet 404: body does not match the schema: …"},
		{"admin envelope as 500", "RunSteer", 500, withJSON(), `{"error":{"type":"mockingbird_admin","message":"x"}}`,
			"api: RunSteer 500: body does not match the schema: …"},
		{"stop accepted with bad status", "RunStop", 200, withJSON(), `{"run_id":"` + id + `","status":"expired"}`,
			"api: RunStop 200: body does not match the schema: …"},
		{"approval resolved 0", "RunApproval", 200, withJSON(), `{"object":"hermes.run.approval_response","run_id":"` + id + `","choice":"once","resolved":0}`,
			"api: RunApproval 200: body does not match the schema: …"},
		{"unsupported without prefix", "RunSteer", 501, withJSON(), strings.Replace(errSteer501, "Mockingbird: ", "", 1),
			"api: RunSteer 501: body does not match the schema: …"},
		{"empty capabilities", "CapabilitiesGet", 200, withJSON(), `{}`,
			"api: CapabilitiesGet 200: body does not match the schema: …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.ValidateResponse(tt.op, tt.status, tt.header, []byte(tt.body))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if prefix, ok := strings.CutSuffix(tt.want, "…"); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("error = %q, want prefix %q", err, prefix)
				}
			} else if err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}
		})
	}
}

// The schema errors name where and what is wrong, one line per finding.
func TestValidateResponseDetails(t *testing.T) {
	c := contract(t)
	tests := []struct {
		body, want string
	}{
		{strings.Replace(recQueued, `"status":"queued"`, `"status":5`, 1),
			`api: RunGet 200: body does not match the schema: at /status: value is not one of the allowed values ["queued","running","waiting_for_approval","stopping","completed","failed","cancelled","interrupted"]`},
		{strings.Replace(recQueued, `"run_id":"`+id+`",`, ``, 1),
			`api: RunGet 200: body does not match the schema: at /run_id: property "run_id" is missing`},
		{strings.Replace(recQueued, `}`, `,"input":"x"}`, 1),
			`api: RunGet 200: body does not match the schema: at /: property "input" is unsupported`},
		{strings.Replace(recQueued, `"run_id":"`+id+`"`, `"run_id":"run_1"`, 1),
			`api: RunGet 200: body does not match the schema: at /run_id: string doesn't match the regular expression "^run_[0-9a-f]{32}$"`},
		{strings.Replace(strings.Replace(recQueued, `"status":"queued"`, `"status":"done"`, 1), `"object":"hermes.run"`, `"object":1`, 1),
			`api: RunGet 200: body does not match the schema: at /object: value is not one of the allowed values ["hermes.run"] | at /status: value is not one of the allowed values ["queued","running","waiting_for_approval","stopping","completed","failed","cancelled","interrupted"]`},
	}
	for _, tt := range tests {
		err := c.ValidateResponse("RunGet", 200, withJSON(), []byte(tt.body))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ValidateResponse(%s) = %v, want %q", tt.body, err, tt.want)
		}
	}
}

func TestReplaceInfinity(t *testing.T) {
	tests := []struct {
		in, out string
		ok      bool
	}{
		{`{"a":1}`, ``, false},
		{`{"a":"Infinity"}`, ``, false},
		{`{"a":"\"Infinity"}`, ``, false},
		{`{"a":Infinity}`, `{"a":1e999}`, true},
		{`[-Infinity,"x\\",Infinity]`, `[-1e999,"x\\",1e999]`, true},
		{`{"Infinity":Infinity}`, `{"Infinity":1e999}`, true},
		{`Infinit`, ``, false},
	}
	for _, tt := range tests {
		out, ok := replaceInfinity([]byte(tt.in))
		if ok != tt.ok || string(out) != tt.out {
			t.Errorf("replaceInfinity(%s) = %q, %v; want %q, %v", tt.in, out, ok, tt.out, tt.ok)
		}
	}
}

func TestRequestIssues(t *testing.T) {
	c := contract(t)
	runPath := map[string]string{"run_id": id}
	tests := []struct {
		name   string
		op     string
		header http.Header
		path   map[string]string
		body   string
		want   []Issue
	}{
		{"valid create", "RunCreate", hdr("Idempotency-Key", "delivery"), nil, `{"input":"synthetic"}`, nil},
		{"content type is ignored", "RunCreate", hdr("Content-Type", "text/plain"), nil, `{"input":"synthetic input"}`, nil},
		{"repeated and odd headers are not findings", "RunCreate", hdr("Idempotency-Key", "a", "Idempotency-Key", "b", "X-Hermes-Session-Key", " é\x85 ", "Authorization", "Basic x"), nil, `{"input":"x"}`, nil},
		{"optional body absent", "RunCreate", hdr(), nil, ``, nil},
		{"unknown fields and falsy values", "RunCreate", hdr(), nil, `{"input":[{"role":"user","content":1}],"model":null,"session_id":0,"conversation_history":"","extra":{"b":2}}`, nil},
		{"huge numbers", "RunCreate", hdr(), nil, `{"input":"x","n":1e999,"m":-1` + strings.Repeat("0", 500) + `}`, nil},
		{"missing input", "RunCreate", hdr(), nil, `{}`, []Issue{{"body", "/input"}}},
		{"array root", "RunCreate", hdr(), nil, `[]`, []Issue{{"body", ""}}},
		{"not JSON", "RunCreate", hdr(), nil, `{`, []Issue{{"body", ""}}},
		{"Infinity is not JSON in requests", "RunCreate", hdr(), nil, `{"input":"x","session_id":Infinity}`, []Issue{{"body", ""}}},
		{"trailing data", "RunCreate", hdr(), nil, `{"input":"x"} {}`, []Issue{{"body", ""}}},

		{"valid get", "RunGet", hdr(), runPath, ``, nil},
		{"get body is not looked at", "RunGet", hdr(), runPath, `{`, nil},
		{"missing path parameter", "RunGet", hdr(), nil, ``, []Issue{{"path", "run_id"}}},
		{"stop body is not read", "RunStop", hdr(), runPath, `garbage`, nil},
		{"events", "RunEvents", hdr("Last-Event-ID", "3"), runPath, ``, nil},
		{"capabilities", "CapabilitiesGet", hdr("Authorization", "Bearer k"), nil, ``, nil},

		{"valid approval", "RunApproval", hdr(), runPath, `{"choice":"Approve","request_id":null,"all":"yes"}`, nil},
		{"choice not a string", "RunApproval", hdr(), runPath, `{"choice":1}`, []Issue{{"body", "/choice"}}},
		{"two findings", "RunApproval", hdr(), runPath, `{"request_id":5}`, []Issue{{"body", "/choice"}, {"body", "/request_id"}}},
		{"non-object approval", "RunApproval", hdr(), runPath, `"once"`, []Issue{{"body", ""}}},

		{"valid steer", "RunSteer", hdr(), runPath, `{"input":[{"type":"text","text":"also run the tests"}]}`, nil},
		{"steer without text is still an object", "RunSteer", hdr(), runPath, `{}`, nil},
		{"unparseable steer", "RunSteer", hdr(), runPath, `not json`, []Issue{{"body", ""}}},

		{"unknown operation", "RunList", hdr(), nil, `{`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/runs?x=1", nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header = tt.header
			got := c.RequestIssues(tt.op, r, tt.path, []byte(tt.body))
			if !slices.Equal(got, tt.want) {
				t.Errorf("RequestIssues = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPointer(t *testing.T) {
	tests := []struct {
		path []string
		want string
	}{
		{nil, ""},
		{[]string{"input"}, "/input"},
		{[]string{"conversation_history", "0", "role"}, "/conversation_history/0/role"},
		{[]string{"a/b", "m~n"}, "/a~1b/m~0n"},
	}
	for _, tt := range tests {
		if got := pointer(tt.path); got != tt.want {
			t.Errorf("pointer(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// RequestIssues must never panic on any body bytes (`go test -fuzz FuzzRequestIssues ./api` to explore).
func FuzzRequestIssues(f *testing.F) {
	for _, seed := range []string{``, `{`, `{"input":"x"}`, `[]`, `{"choice":1}`, `{"a":Infinity}`, "\xff\xfe", `{"input":` + strings.Repeat("[", 20000)} {
		f.Add(seed)
	}
	c := contract(f)
	r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/runs", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, op := range c.OperationIDs() {
			for _, is := range c.RequestIssues(op, r, map[string]string{"run_id": id}, []byte(body)) {
				if is.In != "body" && is.In != "path" && is.In != "header" && is.In != "query" {
					t.Fatalf("%s: issue %v has an unknown location", op, is)
				}
			}
		}
	})
}

func BenchmarkValidateResponse(b *testing.B) {
	c := contract(b)
	h := withJSON()
	body := []byte(recCompleted)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.ValidateResponse("RunGet", 200, h, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequestIssues(b *testing.B) {
	c := contract(b)
	r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/runs", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.Header.Set("Idempotency-Key", "delivery")
	body := []byte(`{"input":"synthetic","model":"synthetic-model","session_id":"synthetic-session"}`)
	b.ReportAllocs()
	for b.Loop() {
		if is := c.RequestIssues("RunCreate", r, nil, body); is != nil {
			b.Fatal(is)
		}
	}
}

// The memo of conforming bodies never hides a broken one.
func TestValidateResponseMemo(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	good := []byte(`{"run_id":"run_4e685a726271445348426a4a70783364","status":"started","replayed":false}`)
	bad := []byte(`{"run_id":"run_4e685a726271445348426a4a70783364","status":"started","replayed":"false"}`)
	for range 2 {
		if err := c.ValidateResponse("RunCreate", 202, h, good); err != nil {
			t.Fatalf("good body: %v", err)
		}
		if err := c.ValidateResponse("RunCreate", 202, h, bad); err == nil {
			t.Fatal("broken body passed")
		}
	}
}
