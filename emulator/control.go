package emulator

import (
	"errors"
	"net/http"
	"net/http/httptest"

	"github.com/hermes-emulator/hermes-emulator/emulator/control"
)

// Control returns a client of this server's control plane (/__admin), already
// carrying the server's admin key; opts come after it (e.g.
// control.Namespace("t1")). Without a listener (Options.NoListener) the client
// calls Handler() in-process.
func (s *Server) Control(opts ...control.Option) *control.Client {
	base := []control.Option{control.AdminKey(s.opts.AdminKey)}
	url := s.url
	if url == "" {
		url = inprocURL
		base = append(base, control.HTTPClient(s.inprocClient()))
	}
	return control.New(url, append(base, opts...)...)
}

// inprocURL is the base URL of the clients of a server without a listener:
// their requests never leave the process.
const inprocURL = "http://emulator.invalid"

// inprocClient is an http.Client whose requests are served by s.ServeHTTP in
// the calling goroutine. Responses are buffered: an SSE stream arrives when it
// ends, and a dropped connection (a drop fault, hermes.accepted_drop) is an
// error, as over a socket.
func (s *Server) inprocClient() *http.Client {
	return &http.Client{Transport: handlerTransport{s}}
}

type handlerTransport struct{ h http.Handler }

// RoundTrip serves req with the handler on a copy of the request; a handler
// that aborts (http.ErrAbortHandler) yields errConnectionDropped.
func (t handlerTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "192.0.2.1:1234"
	if in.Body == nil {
		in.Body = http.NoBody
	}
	defer func() {
		if req.Body != nil {
			req.Body.Close()
		}
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				resp, err = nil, errConnectionDropped
				return
			}
			panic(p)
		}
	}()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, in)
	out := rec.Result()
	out.Request = req
	return out, nil
}

// errConnectionDropped is what an in-process client sees when the emulator
// closes the connection without a response.
var errConnectionDropped = errors.New("emulator: connection closed without a response")
