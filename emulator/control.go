package emulator

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/hermes-emulator/hermes-emulator/emulator/control"
)

// Control returns a client of this server's control plane (/__admin), already
// carrying the server's admin key; opts come after it (e.g.
// control.Namespace("t1")). Without a listener (Options.NoListener) the client
// calls Handler() in-process, and a call whose context ends before the answer
// returns the context's error, as over a socket.
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
// error, as over a socket. The request's context counts as over a socket too
// (handlerTransport.RoundTrip).
func (s *Server) inprocClient() *http.Client {
	return &http.Client{Transport: handlerTransport{s}}
}

type handlerTransport struct{ h http.Handler }

// RoundTrip serves req with the handler on a copy of the request; a handler
// that aborts (http.ErrAbortHandler) yields errConnectionDropped. A context
// that has ended sends nothing, and one that ends before the answer is the
// error (the answer a fault delay held back is dropped), as a socket's
// transport does; a stream whose headers went out before its context ended
// is the response, its body the frames that came, then the context's error.
func (t handlerTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	in := req.Clone(ctx)
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
	cut := ctx.Err()
	if cut != nil && !rec.Flushed {
		return nil, cut
	}
	out := rec.Result()
	out.Request = req
	if cut != nil {
		out.Body = cutBody{out.Body, cut}
	}
	return out, nil
}

// cutBody is the body of a stream whose context ended while it was open: its
// bytes, then the context's error instead of io.EOF.
type cutBody struct {
	io.ReadCloser
	err error
}

func (b cutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		err = b.err
	}
	return n, err
}

// errConnectionDropped is what an in-process client sees when the emulator
// closes the connection without a response.
var errConnectionDropped = errors.New("emulator: connection closed without a response")
