package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The one error renderer: every error body the emulator sends is a
// runs.Error's envelope (runs/errors.go holds the constructors and the
// code → status table).

// WriteError renders err as the contract's envelope — the one renderer of
// every error body the emulator sends.
func WriteError(w http.ResponseWriter, err error) {
	var e *runs.Error
	if !errors.As(err, &e) {
		e = runs.Internal(err.Error())
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter() {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body())
}

// ErrorHandler is the Echo error handler: *runs.Error as its envelope, an
// unmatched route as page not found, anything else as a 500.
func ErrorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && (he.Code == http.StatusNotFound || he.Code == http.StatusMethodNotAllowed) {
		err = runs.ErrPageNotFound
	}
	var e *runs.Error
	if errors.As(err, &e) && e.Envelope == runs.EnvAdmin {
		CallOf(c).Own = true
	}
	WriteError(c.Response(), err)
}
