package gen_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/gen"
)

// recorder implements gen.ServerInterface and records what the generated wrapper passed in.
type recorder struct {
	op, runID, idemKey, sessionKey, auth string
}

var _ gen.ServerInterface = (*recorder)(nil)

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func (r *recorder) done(c echo.Context, op, runID string, auth *string) error {
	r.op, r.runID, r.auth = op, runID, deref(auth)
	return c.NoContent(http.StatusNoContent)
}

func (r *recorder) CapabilitiesGet(c echo.Context, p gen.CapabilitiesGetParams) error {
	return r.done(c, "CapabilitiesGet", "", p.Authorization)
}

func (r *recorder) RunCreate(c echo.Context, p gen.RunCreateParams) error {
	r.idemKey, r.sessionKey = deref(p.IdempotencyKey), deref(p.XHermesSessionKey)
	return r.done(c, "RunCreate", "", p.Authorization)
}

func (r *recorder) RunGet(c echo.Context, id gen.RunIdPath, p gen.RunGetParams) error {
	return r.done(c, "RunGet", id, p.Authorization)
}

func (r *recorder) RunApproval(c echo.Context, id gen.RunIdPath, p gen.RunApprovalParams) error {
	return r.done(c, "RunApproval", id, p.Authorization)
}

func (r *recorder) RunEvents(c echo.Context, id gen.RunIdPath, p gen.RunEventsParams) error {
	return r.done(c, "RunEvents", id, p.Authorization)
}

func (r *recorder) RunSteer(c echo.Context, id gen.RunIdPath, p gen.RunSteerParams) error {
	return r.done(c, "RunSteer", id, p.Authorization)
}

func (r *recorder) RunStop(c echo.Context, id gen.RunIdPath, p gen.RunStopParams) error {
	return r.done(c, "RunStop", id, p.Authorization)
}

// The generated wrapper never rejects a request (templates/echo-wrappers.tmpl): repeated headers are
// joined with ", " (wire.md §5) and an undecodable path segment is passed as sent (wire.md §6).
func TestWrapperNeverRejects(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		target  string
		rawPath string // overrides URL.RawPath (and Path) when set: a malformed escape cannot be parsed
		header  [][2]string
		want    recorder
	}{
		{"create, no headers", "POST", "/v1/runs", "", nil,
			recorder{op: "RunCreate", idemKey: "<nil>", sessionKey: "<nil>", auth: "<nil>"}},
		{"repeated headers are joined", "POST", "/v1/runs", "",
			[][2]string{{"Idempotency-Key", "a"}, {"Idempotency-Key", "b"}, {"X-Hermes-Session-Key", " m "}, {"Authorization", "Bearer k"}, {"Authorization", "Bearer j"}},
			recorder{op: "RunCreate", idemKey: "a, b", sessionKey: " m ", auth: "Bearer k, Bearer j"}},
		{"header with a comma stays one value", "POST", "/v1/runs", "", [][2]string{{"Idempotency-Key", "a,b"}},
			recorder{op: "RunCreate", idemKey: "a,b", sessionKey: "<nil>", auth: "<nil>"}},
		{"plain run id", "GET", "/v1/runs/run_4e685a726271445348426a4a70783364", "", nil,
			recorder{op: "RunGet", runID: "run_4e685a726271445348426a4a70783364", auth: "<nil>"}},
		{"escaped slash is decoded", "POST", "/v1/runs/a%2Fb/stop", "", nil,
			recorder{op: "RunStop", runID: "a/b", auth: "<nil>"}},
		{"escaped percent is decoded once", "GET", "/v1/runs/a%2525/events", "", nil,
			recorder{op: "RunEvents", runID: "a%25", auth: "<nil>"}},
		{"malformed escape is passed as sent", "POST", "/v1/runs/x", "/v1/runs/a%zz/approval", nil,
			recorder{op: "RunApproval", runID: "a%zz", auth: "<nil>"}},
		{"steer", "POST", "/v1/runs/r/steer", "", [][2]string{{"Authorization", "Bearer k"}},
			recorder{op: "RunSteer", runID: "r", auth: "Bearer k"}},
		{"capabilities", "GET", "/v1/capabilities", "", nil,
			recorder{op: "CapabilitiesGet", auth: "<nil>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := echo.New()
			rec := &recorder{}
			gen.RegisterHandlers(e, rec)
			req := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.rawPath != "" {
				req.URL.Path, req.URL.RawPath = tt.rawPath, tt.rawPath
			}
			for _, h := range tt.header {
				req.Header.Add(h[0], h[1])
			}
			w := httptest.NewRecorder()
			e.ServeHTTP(w, req)
			if w.Code != http.StatusNoContent {
				t.Fatalf("status %d (%s), want the handler's 204", w.Code, w.Body)
			}
			if *rec != tt.want {
				t.Errorf("handler got %+v, want %+v", *rec, tt.want)
			}
		})
	}
}
