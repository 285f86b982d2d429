package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/gen"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// RunCreate is POST /v1/runs (runs-api §6.1), in the spec's evaluation order.
func (h *Handlers) RunCreate(c echo.Context, _ gen.RunCreateParams) error {
	call, r := CallOf(c), c.Request()
	t := call.Target
	if h.GW.Draining(t) {
		return runs.ErrDraining
	}
	memory, err := runs.MemoryKey(header(r, "X-Hermes-Session-Key"), h.Opts.APIKey != "")
	if err != nil {
		return err
	}
	key := runs.PyStripLatin1(header(r, "Idempotency-Key"))
	if len(call.Body) == 0 {
		return runs.ErrInvalidJSON
	}
	if err := h.GW.SweepTick(t); err != nil {
		return err
	}
	body, perr := runs.Parse(call.Body)
	if perr != nil {
		return runs.ErrInvalidJSON
	}
	if key != "" && !runs.ValidIdempotencyKey(key) {
		return runs.ErrInvalidKey
	}
	sub, err := runs.ValidateSubmission(body)
	if err != nil {
		return err
	}
	fingerprint := ""
	if key != "" {
		fp, ferr := runs.Fingerprint(body, memory)
		if ferr != nil {
			return runs.Unsupported("lone Unicode surrogates cannot be fingerprinted by the pinned provider")
		}
		fingerprint = fp
	}
	a, err := h.GW.Admit(t, key, fingerprint, sub)
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
	if s.Checkpoint != "" {
		call.RunID, call.Checkpoint = runID, s.Checkpoint
	}
	return writeJSON(c, 200, s.Body)
}

// RunApproval is POST /v1/runs/{run_id}/approval (runs-api §6.5).
func (h *Handlers) RunApproval(c echo.Context, runID gen.RunIdPath, _ gen.RunApprovalParams) error {
	call := CallOf(c)
	a, err := h.GW.Approve(call.Target, runID, call.Body)
	if err != nil {
		return err
	}
	call.RunID, call.Checkpoint = runID, a.Checkpoint
	return writeJSON(c, 200, a.Body)
}

// RunSteer is POST /v1/runs/{run_id}/steer (runs-api §6.6).
func (h *Handlers) RunSteer(c echo.Context, runID gen.RunIdPath, _ gen.RunSteerParams) error {
	call := CallOf(c)
	a, err := h.GW.Steer(call.Target, runID, call.Body, call.effect("hermes.steer_refused"))
	if err != nil {
		return err
	}
	call.RunID, call.Checkpoint = runID, a.Checkpoint
	return writeJSON(c, 200, a.Body)
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
