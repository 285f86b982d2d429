// Package handlers implements the generated server interface (gen.ServerInterface):
// the seven public operations, translating wire ↔ domain. Handlers are thin: the
// rules live in package runs, the state in package gateway; handlers return
// *runs.Error values and WriteError renders every envelope.
package handlers

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/gen"
)

// Options are the server options the operations read.
type Options struct {
	APIKey    string        // --api-key (auth itself is checked by the pipeline)
	Durable   bool          // --db is set (capabilities)
	Keepalive time.Duration // --sse-keepalive; 0 = 30s
}

// Handlers implements gen.ServerInterface on a gateway.
type Handlers struct {
	GW   *gateway.Gateway
	Opts Options
}

var _ gen.ServerInterface = (*Handlers)(nil)

// Call is what the request pipeline hands an operation and reads back from it.
type Call struct {
	Target  gateway.Target
	Body    []byte          // the request body, read in full by the pipeline (runs-api §3 step 8)
	Effects []faults.Effect // effects switched on by fault rules (controls §6.5)
	Head    bool            // the request was a HEAD (wire.md §6)

	// Set by the operation.
	RunID      string // journal ids.runId
	Checkpoint string // the accepted-mutation checkpoint, when the mutation was accepted
	Drop       bool   // hermes.accepted_drop fired on a new admission: lose the response
	Own        bool   // the answer is an admin envelope (hardening H3's 429), outside the contract: not validated
}

type callKey struct{}

// WithCall returns ctx carrying c.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallOf returns the Call of a request (an empty one outside the pipeline).
func CallOf(c echo.Context) *Call {
	if call, ok := c.Request().Context().Value(callKey{}).(*Call); ok {
		return call
	}
	return &Call{Target: gateway.Main("default")}
}

func (c *Call) effect(name string) bool {
	for _, e := range c.Effects {
		if e.Name == name {
			return true
		}
	}
	return false
}

// header returns a request header as the emulator reads it (wire.md §5):
// repeated occurrences joined with ", ", bytes as sent.
func header(r *http.Request, name string) string {
	return strings.Join(r.Header.Values(name), ", ")
}

func writeJSON(c echo.Context, status int, body []byte) error {
	return c.Blob(status, "application/json", body)
}
