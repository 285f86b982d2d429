// Package api is the run-time side of the contract: it loads openapi.yaml (embedded by the root
// package) once and checks emulator responses and vendor requests against it.
//
// Response validation (ValidateResponse) is for tests and self-checks: a response the contract does
// not allow is a bug in the emulator. Request validation (RequestIssues) is advisory only: its
// findings go to the journal's `issues` (controls.md §7.1) and never change a status, header or body
// (runs-api §6, D8).
//
// The package does not depend on Echo or on gen/: callers pass the operationId they matched, the
// status, headers and body bytes.
package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	hermesemulator "github.com/hermes-emulator/hermes-emulator"
)

// Contract is the loaded, validated and pre-indexed openapi.yaml. It is immutable after Load and
// safe for concurrent use.
type Contract struct {
	ops map[string]*operation // by operationId

	respOpts []openapi3.SchemaValidationOption
	reqOpts  []openapi3.SchemaValidationOption
	memo     memo // response bodies already found conforming
}

// operation is one operation of the document, indexed so that a validation needs no router lookup
// and no $ref resolution.
type operation struct {
	id     string
	method string
	path   string

	params       []*openapi3.Parameter // path-item parameters merged with the operation's own
	body         *openapi3.Schema      // JSON request body schema; nil when no body is declared
	bodyRequired bool

	responses map[int]*response
	statuses  string // declared statuses, for error messages: "200, 401, 404, 500"
}

// response is one declared status of an operation.
type response struct {
	media   map[string]*openapi3.Schema // lower-case media type → schema (nil when none)
	headers []responseHeader
}

type responseHeader struct {
	name     string
	required bool
	schema   *openapi3.Schema
}

var load = sync.OnceValues(func() (*Contract, error) { return parse(hermesemulator.OpenAPI) })

// Load returns the Contract of the embedded openapi.yaml. The document is parsed, validated and
// indexed once per process; every call returns the same *Contract (or the same error).
func Load() (*Contract, error) { return load() }

// parse loads, validates and indexes an OpenAPI 3.0 document.
func parse(spec []byte) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("api: load openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api: invalid openapi.yaml: %w", err)
	}

	anyValueAtRunTime(doc)
	common := append(doc.GetSchemaValidationOptions(),
		openapi3.MultiErrors(), openapi3.SetSchemaErrorMessageCustomizer(schemaErrorMessage))
	c := &Contract{
		ops:      map[string]*operation{},
		respOpts: append(slices.Clip(common), openapi3.VisitAsResponse()),
		reqOpts:  append(slices.Clip(common), openapi3.VisitAsRequest()),
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o, err := index(path, method, item, op)
			if err != nil {
				return nil, err
			}
			if _, dup := c.ops[o.id]; dup {
				return nil, fmt.Errorf("api: duplicate operationId %q", o.id)
			}
			c.ops[o.id] = o
		}
	}
	return c, nil
}

// anyValueAtRunTime gives the run-time validator AnyValue as kin-openapi's
// "any value, null included" (no type, nullable). The document spells it as an
// anyOf of every JSON type, recursing into arrays, because that is the form
// Ajv and Redocly accept; but kin-openapi visits a matched anyOf branch twice,
// so that form costs 2^depth on a nested array — a CPU attack in one small
// body. Both forms accept exactly the same values (TestAnyValueAcceptsEveryJSONValue).
func anyValueAtRunTime(doc *openapi3.T) {
	if doc.Components == nil {
		return
	}
	ref, ok := doc.Components.Schemas["AnyValue"]
	if !ok || ref.Value == nil {
		return
	}
	// Every $ref to AnyValue shares this *Schema, so one assignment serves all.
	*ref.Value = openapi3.Schema{Nullable: true, Description: ref.Value.Description, Extensions: ref.Value.Extensions}
}

func index(path, method string, item *openapi3.PathItem, op *openapi3.Operation) (*operation, error) {
	if op.OperationID == "" {
		return nil, fmt.Errorf("api: %s %s has no operationId", method, path)
	}
	o := &operation{id: op.OperationID, method: method, path: path, responses: map[int]*response{}}

	// Operation parameters override path-item parameters with the same name and location.
	for _, ref := range op.Parameters {
		o.params = append(o.params, ref.Value)
	}
	for _, ref := range item.Parameters {
		p := ref.Value
		if !slices.ContainsFunc(o.params, func(q *openapi3.Parameter) bool { return q.Name == p.Name && q.In == p.In }) {
			o.params = append(o.params, p)
		}
	}

	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			o.body = mt.Schema.Value
			o.bodyRequired = rb.Value.Required
		}
	}

	var statuses []int
	for key, ref := range op.Responses.Map() {
		status, err := strconv.Atoi(key)
		if err != nil || status < 100 || status > 599 {
			return nil, fmt.Errorf("api: %s: response key %q is not a status code (ranges and default are not supported)", o.id, key)
		}
		r := &response{media: map[string]*openapi3.Schema{}}
		for mediaType, mt := range ref.Value.Content {
			var s *openapi3.Schema
			if mt.Schema != nil {
				s = mt.Schema.Value
			}
			r.media[strings.ToLower(mediaType)] = s
		}
		for name, h := range ref.Value.Headers {
			if strings.EqualFold(name, "Content-Type") {
				continue // checked against the declared media types instead
			}
			var s *openapi3.Schema
			if h.Value.Schema != nil {
				s = h.Value.Schema.Value
			}
			r.headers = append(r.headers, responseHeader{name: name, required: h.Value.Required, schema: s})
		}
		slices.SortFunc(r.headers, func(a, b responseHeader) int { return strings.Compare(a.name, b.name) })
		o.responses[status] = r
		statuses = append(statuses, status)
	}
	slices.Sort(statuses)
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		parts[i] = strconv.Itoa(s)
	}
	o.statuses = strings.Join(parts, ", ")
	return o, nil
}

// OperationIDs returns the operationIds of the contract, sorted.
func (c *Contract) OperationIDs() []string {
	ids := make([]string, 0, len(c.ops))
	for id := range c.ops {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// headerValue is a request or response header as the emulator reads it: repeated fields joined
// with ", " (wire.md §5). ok is false when the header is absent.
func headerValue(h http.Header, name string) (v string, ok bool) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", false
	case 1:
		return vs[0], true
	}
	return strings.Join(vs, ", "), true
}

// schemaErrorMessage renders one schema finding on one line — where and why, without kin-openapi's
// schema and value dumps: `at /status: value is not one of the allowed values [...]`. The pointer
// "" (the whole body) is written as "/".
func schemaErrorMessage(err *openapi3.SchemaError) string {
	at := pointer(err.JSONPointer())
	if at == "" {
		at = "/"
	}
	return "at " + at + ": " + err.Reason
}
