// Package emulatortest starts a private emulator for one test, the way
// net/http/httptest starts a server: one line, cleaned up when the test ends.
//
//	srv := emulatortest.New(t, emulator.Options{})
//	resp, _ := http.Post(srv.URL()+"/v1/runs", "application/json", strings.NewReader(`{"input":"hi"}`))
package emulatortest

import (
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// New starts an emulator with opts and closes it when tb ends.
func New(tb testing.TB, opts emulator.Options) *emulator.Server {
	tb.Helper()
	srv, err := emulator.New(opts)
	if err != nil {
		tb.Fatalf("emulatortest: %v", err)
	}
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Errorf("emulatortest: close: %v", err)
		}
	})
	return srv
}
