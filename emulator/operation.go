package emulator

import (
	"net/http"

	"github.com/hermes-emulator/hermes-emulator/api"
	"github.com/hermes-emulator/hermes-emulator/handlers"
	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// respWriter buffers an operation's response so the finishing step can add
// headers (checkpoint) and validate it before it is sent; Flush switches to
// streaming (SSE).
type respWriter struct {
	w         http.ResponseWriter
	status    int
	buf       []byte
	streaming bool
}

func (r *respWriter) Header() http.Header { return r.w.Header() }

func (r *respWriter) WriteHeader(code int) {
	if r.streaming {
		r.w.WriteHeader(code)
		return
	}
	if r.status == 0 {
		r.status = code
	}
}

func (r *respWriter) Write(b []byte) (int, error) {
	if r.streaming {
		return r.w.Write(b)
	}
	if r.status == 0 {
		r.status = 200
	}
	r.buf = append(r.buf, b...)
	return len(b), nil
}

func (r *respWriter) Flush() {
	if !r.streaming {
		r.streaming = true
		if r.status == 0 {
			r.status = 200
		}
		r.w.WriteHeader(r.status)
		if len(r.buf) > 0 {
			_, _ = r.w.Write(r.buf)
		}
	}
	if f, ok := r.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *respWriter) Unwrap() http.ResponseWriter { return r.w }

// loadedContract waits until the contract is loaded (emulator.New loads it in
// the background) and returns it; nil without response validation.
func (s *Server) loadedContract() (*api.Contract, error) {
	<-s.contractReady
	return s.contract, s.contractErr
}

// Step 11: the operation, through the generated Echo server; its answer is
// buffered (unless it streams) and validated against the contract.
func (x *exchange) operate() {
	handlers.SetSecurityHeaders(x.w.Header())
	call := &handlers.Call{Target: x.target, Body: x.body, Effects: x.fault.Effects, Head: x.method == "HEAD"}
	rw := &respWriter{w: x.w}
	req := x.r.WithContext(handlers.WithCall(x.r.Context(), call))
	if call.Head {
		req.Method = "GET"
	}
	x.s.echo.ServeHTTP(rw, req)
	if rw.streaming {
		x.journal(rw.status)
		return
	}
	status := rw.status
	if status == 0 {
		status = 200
	}
	resp := rw.buf
	contract, cerr := x.s.loadedContract()
	if cerr != nil {
		status, resp = 500, runs.Internal("contract: "+cerr.Error()).Body()
		x.w.Header().Set("Content-Type", "application/json")
	} else if contract != nil && !call.Own {
		if err := contract.ValidateResponse(x.opID, status, x.w.Header(), resp); err != nil {
			x.s.log.Error("response broke the contract", "operationId", x.opID, "status", status, "error", err)
			status, resp = 500, runs.Internal("response broke the contract: "+err.Error()).Body()
			x.w.Header().Set("Content-Type", "application/json")
		}
	}
	x.finish(call, contract, status, resp)
}

// Step 12: finishing — the checkpoint of a successful mutation, the journal
// entry (with the request's issues on an error), then the answer.
func (x *exchange) finish(call *handlers.Call, contract *api.Contract, status int, resp []byte) {
	if call.Checkpoint != "" {
		x.entry.Accepted, x.entry.Checkpoint = true, call.Checkpoint
	}
	x.entry.RunID = call.RunID
	if call.Drop {
		x.journal(0)
		drop(x.w)
		return
	}
	if x.mutating() && status >= 200 && status < 400 {
		x.w.Header().Set("X-Mockingbird-Checkpoint", x.s.gw.Finish(x.target, call.Checkpoint))
	}
	if status >= 400 {
		x.entry.Request = requestMeta(x.r)
		if contract != nil {
			for _, is := range contract.RequestIssues(x.opID, x.r, map[string]string{"run_id": x.runID}, x.body) {
				x.entry.Issues = append(x.entry.Issues, journal.Issue{In: is.In, Pointer: is.Pointer})
			}
		}
	}
	// The body is done with: its bytes go back to the in-flight bound before
	// the answer is written, which lasts as long as the client takes to read
	// it — for ever for one that does not (hardening H5).
	x.release()
	x.body, call.Body = nil, nil
	x.w.WriteHeader(status)
	if !call.Head {
		_, _ = x.w.Write(resp)
	}
	x.journal(status)
}
