package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/control"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

func TestScenarios(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{})
	ctx := context.Background()
	c := control.New(srv.URL()).In("demo")
	file := json.RawMessage(`{"scenarios":[{"name":"done","steps":[{"after":0,"observe":{"status":"completed"}}]}]}`)
	if n, err := c.PutScenarios(ctx, file); err != nil || n != 1 {
		t.Fatalf("put: %d %v", n, err)
	}
	if got, err := c.Scenarios(ctx); err != nil || string(got) != string(file) {
		t.Fatalf("get: %s %v", got, err)
	}
	_, err := c.PutScenarios(ctx, map[string]any{"scenarios": []any{map[string]any{"name": "bad name"}}})
	var cerr *control.Error
	if !errors.As(err, &cerr) || cerr.Status != 400 || cerr.Message != "scenarios[0].name: must match /^[A-Za-z0-9_.-]{1,64}$/" {
		t.Fatalf("invalid put: %#v", err)
	}
	if err := c.DeleteScenarios(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Scenarios(ctx); err != nil || string(got) != `{"scenarios":[]}` {
		t.Fatalf("after delete: %s %v", got, err)
	}
}

// The README's Go row: a set from scenarios.Load (or Parse) goes to PutScenarios as it is.
func TestPutScenariosTakesASet(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{})
	ctx := context.Background()
	file := `{"scenarios":[{"name":"done","steps":[{"after":0,"observe":{"status":"completed"}}]}]}`
	set, perr := scenarios.Parse([]byte(file))
	if perr != nil {
		t.Fatal(perr)
	}
	c := srv.Control()
	if n, err := c.PutScenarios(ctx, set); err != nil || n != 1 {
		t.Fatalf("put: %d %v", n, err)
	}
	if got, err := c.Scenarios(ctx); err != nil || string(got) != file {
		t.Fatalf("get: %s %v", got, err)
	}
}
