package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	hermesemulator "github.com/hermes-emulator/hermes-emulator"
)

// anyValues are JSON values of every type, nulls nested in arrays and objects included. AnyValue in
// openapi.yaml is an anyOf of every JSON type (a form Ajv compiles, unlike `nullable: true` without a
// `type`); it must accept each of them exactly as the old type-less nullable schema did.
var anyValues = []string{
	`null`, `true`, `false`, `0`, `-1.5`, `123456789012345678901234567890`, `1e300`, `""`, `"x"`,
	`[]`, `[null]`, `[[null,[null]],1,"a",{}]`, `{}`, `{"a":null}`, `{"a":[null,{"b":null}]}`,
}

func TestAnyValueAcceptsEveryJSONValue(t *testing.T) {
	c := contract(t)
	runPath := map[string]string{"run_id": id}
	r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/runs", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header = hdr()
	for _, v := range anyValues {
		create := `{"input":` + v + `,"session_id":` + v + `,"model":` + v + `,"conversation_history":` + v +
			`,"previous_response_id":` + v + `,"instructions":` + v + `,"provider":` + v + `,"model_options":` + v + `}`
		if got := c.RequestIssues("RunCreate", r, nil, []byte(create)); got != nil {
			t.Errorf("RunCreate %s: issues %v, want none", create, got)
		}
		approval := `{"choice":"once","all":` + v + `,"resolve_all":` + v + `}`
		if got := c.RequestIssues("RunApproval", r, runPath, []byte(approval)); got != nil {
			t.Errorf("RunApproval %s: issues %v, want none", approval, got)
		}
		steer := `{"input":` + v + `,"message":` + v + `,"text":` + v + `}`
		if got := c.RequestIssues("RunSteer", r, runPath, []byte(steer)); got != nil {
			t.Errorf("RunSteer %s: issues %v, want none", steer, got)
		}
		rec := strings.Replace(strings.Replace(recQueued, `"session_id":"`+id+`"`, `"session_id":`+v, 1), `"model":"hermes-agent"`, `"model":`+v, 1)
		if rec == recQueued {
			t.Fatalf("recQueued changed shape; update this test: %s", recQueued)
		}
		if err := c.ValidateResponse("RunGet", 200, withJSON(), []byte(rec)); err != nil {
			t.Errorf("RunGet 200 %s: %v", rec, err)
		}
	}
}

// A deeply nested array costs the validator time in proportion to its size: the run-time AnyValue is
// kin-openapi's type-less nullable schema, not the document's recursive anyOf, which kin-openapi
// visits twice per level (2^depth: at depth 64 this test would never end).
func TestAnyValueDeepNestingIsLinear(t *testing.T) {
	// Without the run-time form this test would hang instead of failing: check it is in place first.
	doc, err := openapi3.NewLoader().LoadFromData(hermesemulator.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	anyValueAtRunTime(doc)
	if ref := doc.Components.Schemas["AnyValue"]; ref == nil || ref.Value == nil || ref.Value.AnyOf != nil || !ref.Value.Nullable {
		t.Fatal("openapi.yaml's AnyValue is not replaced by the type-less nullable schema at run time")
	}
	c := contract(t)
	deep := strings.Repeat("[", 64) + "null" + strings.Repeat("]", 64)
	r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/runs/"+id+"/steer", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header = hdr()
	if got := c.RequestIssues("RunSteer", r, map[string]string{"run_id": id}, []byte(`{"input":`+deep+`}`)); got != nil {
		t.Fatalf("issues %v, want none", got)
	}
	rec := strings.Replace(recQueued, `"model":"hermes-agent"`, `"model":`+deep, 1)
	if err := c.ValidateResponse("RunGet", 200, withJSON(), []byte(rec)); err != nil {
		t.Fatalf("RunGet 200 with a deep model: %v", err)
	}
}
