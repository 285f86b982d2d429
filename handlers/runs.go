package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/gen"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// RunCreate is POST /v1/runs (runs-api §6.1). Its checks are pure, so they run
// here, before the gateway's one transaction, which answers their errors in the
// spec's evaluation order (the drain flag first).
func (h *Handlers) RunCreate(c echo.Context, _ gen.RunCreateParams) error {
	call, r := CallOf(c), c.Request()
	memory, key, intake := createIntake(r, call.Body, h.Opts.APIKey != "")
	cr := gateway.Creation{Intake: intake, Key: key}
	if intake == nil {
		cr.Sub, cr.Fingerprint, cr.Body = createBody(call.Body, key, memory)
	}
	a, err := h.GW.Create(call.Target, cr)
	if err != nil {
		return err
	}
	call.RunID = a.RunID
	hdr := c.Response().Header()
	if memory != "" {
		hdr["X-Hermes-Session-Key"] = []string{memory}
	}
	replayed := "false"
	if a.Replayed {
		hdr.Set("Idempotency-Replayed", "true")
		replayed = "true"
	} else {
		call.Checkpoint = a.Checkpoint
		call.Drop = call.effect("hermes.accepted_drop")
	}
	return writeJSON(c, 202, []byte(`{"run_id":`+runs.QuoteString(a.RunID)+`,"status":`+runs.QuoteString(a.Status)+`,"replayed":`+replayed+`}`))
}

// createIntake is RunCreate steps 3–5: the session key, the stripped
// Idempotency-Key and an empty body.
func createIntake(r *http.Request, body []byte, auth bool) (memory, key string, err *runs.Error) {
	if memory, err = runs.MemoryKey(header(r, "X-Hermes-Session-Key"), auth); err != nil {
		return "", "", err
	}
	key = runs.PyStripLatin1(header(r, "Idempotency-Key"))
	if len(body) == 0 {
		return memory, key, runs.ErrInvalidJSON
	}
	return memory, key, nil
}

// createBody is RunCreate steps 7–10: parse, the key's syntax, the
// submission's validation and (keyed) its fingerprint.
func createBody(raw []byte, key, memory string) (*runs.Submission, string, *runs.Error) {
	body, perr := runs.Parse(raw)
	if perr != nil {
		return nil, "", runs.ErrInvalidJSON
	}
	if key != "" && !runs.ValidIdempotencyKey(key) {
		return nil, "", runs.ErrInvalidKey
	}
	sub, err := runs.ValidateSubmission(body)
	if err != nil {
		return nil, "", err
	}
	if key == "" {
		return sub, "", nil
	}
	fp, ferr := runs.Fingerprint(body, memory)
	if ferr != nil {
		return nil, "", runs.Unsupported("lone Unicode surrogates cannot be fingerprinted by the pinned provider")
	}
	return sub, fp, nil
}

// RunGet is GET /v1/runs/{run_id} (runs-api §6.2).
func (h *Handlers) RunGet(c echo.Context, runID gen.RunIdPath, _ gen.RunGetParams) error {
	body, err := h.GW.Get(CallOf(c).Target, runID)
	if err != nil {
		return err
	}
	return writeJSON(c, 200, body)
}

// RunStop is POST /v1/runs/{run_id}/stop (runs-api §6.3). The body is not read.
func (h *Handlers) RunStop(c echo.Context, runID gen.RunIdPath, _ gen.RunStopParams) error {
	call := CallOf(c)
	s, err := h.GW.Stop(call.Target, runID)
	if err != nil {
		return err
	}
	if s.Terminal != nil {
		return writeJSON(c, 200, s.Terminal)
	}
	call.RunID, call.Checkpoint = runID, s.Checkpoint
	return writeJSON(c, 200, []byte(`{"run_id":`+runs.QuoteString(runID)+`,"status":"stopping"}`))
}

// RunApproval is POST /v1/runs/{run_id}/approval (runs-api §6.5). The body is
// parsed here, outside the gateway lock; its errors are reported by the
// gateway after the run was found (step 2 before step 3).
func (h *Handlers) RunApproval(c echo.Context, runID gen.RunIdPath, _ gen.RunApprovalParams) error {
	call := CallOf(c)
	var ans *runs.ApprovalAnswer
	body, perr := runs.Parse(call.Body)
	bodyErr := runs.ErrInvalidJSON
	if perr == nil {
		ans, bodyErr = runs.ParseApproval(body)
	}
	a, err := h.GW.Approve(call.Target, runID, ans, bodyErr)
	if err != nil {
		return err
	}
	call.RunID, call.Checkpoint = runID, a.Checkpoint
	b := []byte(`{"object":"hermes.run.approval_response","run_id":` + runs.QuoteString(runID) + `,"choice":` + runs.QuoteString(ans.Choice))
	if ans.HasRequestID {
		b = append(b, `,"request_id":`+runs.QuoteString(ans.RequestID)...)
	}
	b = append(b, `,"resolved":`+strconv.Itoa(a.Resolved)+`}`...)
	return writeJSON(c, 200, b)
}

// RunSteer is POST /v1/runs/{run_id}/steer (runs-api §6.6). The text is
// normalised here, outside the gateway lock; an unparseable or non-object body
// counts as one without text (step 4); its errors come after the gate.
func (h *Handlers) RunSteer(c echo.Context, runID gen.RunIdPath, _ gen.RunSteerParams) error {
	call := CallOf(c)
	body, perr := runs.Parse(call.Body)
	if perr != nil || body.Kind != runs.Object {
		body = runs.ObjectValue(nil)
	}
	text, textErr := runs.SteerText(body)
	cp, err := h.GW.Steer(call.Target, runID, text, textErr, call.effect("hermes.steer_refused"))
	if err != nil {
		return err
	}
	call.RunID, call.Checkpoint = runID, cp
	return writeJSON(c, 200, []byte(`{"object":"hermes.run.steer","run_id":`+runs.QuoteString(runID)+`,"accepted":true}`))
}

// CapabilitiesGet is GET /v1/capabilities (runs-api §6.7).
func (h *Handlers) CapabilitiesGet(c echo.Context, _ gen.CapabilitiesGetParams) error {
	return writeJSON(c, 200, capabilities(h.Opts.APIKey != "", h.Opts.Durable))
}

func capabilities(authRequired, durable bool) []byte {
	b := func(v bool) string {
		if v {
			return "true"
		}
		return "false"
	}
	return []byte(`{"object":"hermes.api_server.capabilities","platform":"hermes-agent","model":"hermes-agent",` +
		`"auth":{"type":"bearer","required":` + b(authRequired) + `},` +
		`"runtime":{"mode":"server_agent","tool_execution":"server","split_runtime":false,` +
		`"description":"Emulated Hermes peer-run API: run lifecycles are scripted through /__admin controls; no agent, tool or model runs."},` +
		`"features":{"chat_completions":false,"chat_completions_streaming":false,"responses_api":false,"responses_streaming":false,` +
		`"run_submission":true,"runs_idempotency":{"supported":true,"durable":` + b(durable) + `,"retention_seconds":86400},` +
		`"run_status":true,"run_events_sse":true,"run_stop":true,"run_steer":true,"run_approval_response":true,` +
		`"tool_progress_events":true,"approval_events":true,"session_key_header":"X-Hermes-Session-Key","cors":false},` +
		`"endpoints":{"runs":{"method":"POST","path":"/v1/runs"},"run_status":{"method":"GET","path":"/v1/runs/{run_id}"},` +
		`"run_events":{"method":"GET","path":"/v1/runs/{run_id}/events"},"run_approval":{"method":"POST","path":"/v1/runs/{run_id}/approval"},` +
		`"run_steer":{"method":"POST","path":"/v1/runs/{run_id}/steer"},"run_stop":{"method":"POST","path":"/v1/runs/{run_id}/stop"}}}`)
}
