package admin

import (
	"testing"

	"github.com/hermes-emulator/hermes-emulator/credentials"
	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Inputs a handler used to ignore or misread silently: each is now refused
// with a 400 (or the route's 409) and an exact message, and changes nothing.

// fullAdmin returns a control plane over a fresh in-memory gateway and fresh
// stores: every route can run.
func fullAdmin(t *testing.T) *Admin {
	t.Helper()
	gw, err := gateway.New(storage.NewMemory(), gateway.Options{Wall: func() float64 { return 1700000000000 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	return New(Deps{GW: gw, Faults: faults.NewStore(), Journal: journal.New(10), Metrics: &journal.Metrics{},
		Credentials: credentials.NewStore(), MaxBodyBytes: 1 << 20, Version: "test"})
}

// must sends one control request and fails the test unless it answers want.
func must(t *testing.T, a *Admin, method, target, body string, want int) string {
	t.Helper()
	w := adminDo(a, method, target, body)
	if w.Code != want {
		t.Fatalf("%s %s %s: %d %s, want %d", method, target, body, w.Code, w.Body, want)
	}
	return w.Body.String()
}

// controls §1 "Routing": the method must match exactly, else the admin 404.
// Echo answered OPTIONS on a route by itself (204 with an Allow header), and
// put Allow on the 404 of a wrong method: control responses carry
// x-mockingbird and nothing else of ours.
func TestWrongMethodIsNoRoute(t *testing.T) {
	a := fullAdmin(t)
	for _, c := range []struct{ method, target, rel string }{
		{"OPTIONS", "/__admin/clock", "/clock"},
		{"OPTIONS", "/__admin", "/"},
		{"OPTIONS", "/__admin/hermes/runs/r1/observe", "/hermes/runs/r1/observe"},
		{"PATCH", "/__admin/clock", "/clock"},
		{"HEAD", "/__admin/faults", "/faults"},
		{"PUT", "/__admin/faults/presets/hermes_throttled", "/faults/presets/hermes_throttled"},
	} {
		w := adminDo(a, c.method, c.target, "")
		want := adminEnvelope("no admin route " + c.method + " " + c.rel + "; GET /__admin lists them")
		if w.Code != 404 || w.Body.String() != want {
			t.Errorf("%s %s: %d %s, want 404 %s", c.method, c.target, w.Code, w.Body, want)
		}
		if v, ok := w.Header()["Allow"]; ok {
			t.Errorf("%s %s: Allow %q", c.method, c.target, v)
		}
	}
}
