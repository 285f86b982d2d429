package emulator_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
	"github.com/hermes-emulator/hermes-emulator/gen"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
)

// Without a listener, Client and Control honour the request's context as a
// socket does: a context already ended sends nothing, and one that ends
// before the answer (a poll held by hermes_poll_timeout) is the caller's
// error, not the answer that came after it — else a test of the
// application's timeout path sees a 404 where a real client sees a timeout.
func TestNoListenerClientsHonourTheContext(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{NoListener: true, SSEKeepalive: time.Hour})
	api, ctl := srv.Client(), srv.Control()

	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := api.RunCreateWithResponse(done, nil, gen.RunCreateRequest{Input: "hi"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("create with an ended context: %v, want context.Canceled", err)
	}
	if err := ctl.Drain(done, true); !errors.Is(err, context.Canceled) {
		t.Fatalf("control with an ended context: %v, want context.Canceled", err)
	}
	if n, err := ctl.Count(t.Context(), genadmin.CountFilter{}); err != nil || n != 0 {
		t.Fatalf("journal after the refused calls: %d entries, %v; want none", n, err)
	}

	// A poll held for 1 s by the preset, under a 100 ms deadline.
	if _, err := ctl.ApplyPreset(t.Context(), "hermes_poll_timeout", nil); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	got, err := api.RunGetWithResponse(short, "missing", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("poll past its deadline: %v %v, want context.DeadlineExceeded", got, err)
	}
	if took := time.Since(began); took > 900*time.Millisecond {
		t.Fatalf("the poll took %v: it waited for the delay", took)
	}
	// The same through http.Client.Timeout.
	if _, err := ctl.ApplyPreset(t.Context(), "hermes_poll_timeout", nil); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: srv.Control().API().Client.(*http.Client).Transport, Timeout: 100 * time.Millisecond}
	if resp, err := hc.Get("http://emulator.invalid/v1/runs/missing"); err == nil {
		resp.Body.Close()
		t.Fatalf("poll past http.Client.Timeout answered %d", resp.StatusCode)
	}

	// A stream cut by its context: the frames that came, then the context's
	// error, as a socket's body gives them.
	created, err := api.RunCreateWithResponse(t.Context(), nil, gen.RunCreateRequest{Input: "hi"})
	if err != nil || created.JSON202 == nil {
		t.Fatalf("create: %v", err)
	}
	id := created.JSON202.RunId
	if _, err := ctl.Events(t.Context(), id, map[string]any{"event": "message.delta", "delta": "one"}); err != nil {
		t.Fatal(err)
	}
	short, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	resp, err := api.RunEvents(short, id, nil)
	if err != nil {
		t.Fatalf("stream: %v, want the response", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(string(b), `"delta": "one"`) {
		t.Fatalf("stream body %q, %v; want the frame, then context.DeadlineExceeded", b, err)
	}
}

// Client carries the server's API key, as Control carries its admin key: with
// Options.APIKey every call of srv.Client() answered 401 unless the caller
// added the header to each. A call that sets its own Authorization keeps it.
func TestClientCarriesTheAPIKey(t *testing.T) {
	for _, nl := range []bool{false, true} {
		srv := emulatortest.New(t, emulator.Options{NoListener: nl, APIKey: "k"})
		api := srv.Client()
		created, err := api.RunCreateWithResponse(t.Context(), nil, gen.RunCreateRequest{Input: "hi"})
		if err != nil || created.StatusCode() != 202 {
			t.Fatalf("NoListener %v: create: %v %s", nl, err, created.Body)
		}
		wrong := gen.Authorization("Bearer x")
		got, err := api.RunGetWithResponse(t.Context(), created.JSON202.RunId, &gen.RunGetParams{Authorization: &wrong})
		if err != nil || got.StatusCode() != 401 {
			t.Fatalf("NoListener %v: a call's own Authorization: %v %d, want 401", nl, err, got.StatusCode())
		}
	}
}
