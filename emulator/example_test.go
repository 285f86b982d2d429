package emulator_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/gen"
)

// Start an emulator, submit a run and poll it, with plain net/http. The clock
// is frozen at 1700000000000 ms so timestamps (and the output) are fixed.
func ExampleNew() {
	srv, err := emulator.New(emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	resp, err := http.Post(srv.URL()+"/v1/runs", "application/json", strings.NewReader(`{"input":"hello"}`))
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))

	resp, err = http.Get(srv.URL() + "/v1/runs/run_4e685a726271445348426a4a70783364")
	if err != nil {
		log.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// Output:
	// 202 {"run_id":"run_4e685a726271445348426a4a70783364","status":"started","replayed":false}
	// 200 {"object":"hermes.run","run_id":"run_4e685a726271445348426a4a70783364","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"run_4e685a726271445348426a4a70783364","model":"hermes-agent"}
}

// The typed client generated from openapi.yaml, with the control plane
// standing in for the agent: submit with an idempotency key, let the run
// complete, poll it.
func ExampleServer_Client() {
	srv, err := emulator.New(emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	api, err := gen.NewClientWithResponses(srv.URL()) // or srv.Client()
	if err != nil {
		log.Fatal(err)
	}
	key := "order-42"
	created, err := api.RunCreateWithResponse(ctx, &gen.RunCreateParams{IdempotencyKey: &key},
		gen.RunCreateRequest{Input: "summarise the report"})
	if err != nil {
		log.Fatal(err)
	}
	id := created.JSON202.RunId
	fmt.Println(created.StatusCode(), id, created.JSON202.Status)

	// The agent finishes the run.
	if _, err := srv.Control().Observe(ctx, id, map[string]any{
		"status": "completed", "output": "All good.",
		"usage": map[string]int{"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
	}); err != nil {
		log.Fatal(err)
	}

	got, err := api.RunGetWithResponse(ctx, id, nil)
	if err != nil {
		log.Fatal(err)
	}
	run := got.JSON200
	fmt.Printf("%d %s %q tokens=%d updated_at=%.3f\n", got.StatusCode(), run.Status, *run.Output, run.Usage.TotalTokens, run.UpdatedAt)
	// Output:
	// 202 run_4e685a726271445348426a4a70783364 started
	// 200 completed "All good." tokens=5 updated_at=1700000000.000
}

// Without a listener, the emulator is an http.Handler: serve it in-process.
func ExampleServer_Handler() {
	srv, err := emulator.New(emulator.Options{NoListener: true})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/runs/missing", nil))
	fmt.Println(rec.Code, rec.Header().Get("X-Mockingbird"), rec.Body.String())
	// Output:
	// 404 hermes@0.0.0-dev; ns=default {"error":{"message":"Run not found: missing","type":"invalid_request_error","param":null,"code":"run_not_found"}}
}
