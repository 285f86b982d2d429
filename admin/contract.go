package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	hermesemulator "github.com/hermes-emulator/hermes-emulator"
)

// contract is admin.yaml (hermesemulator.AdminAPI) loaded and indexed: one
// operation per route, found by method and Echo route path.
type contract struct {
	ops    map[string]*operation // "METHOD /echo/path" → operation
	routes []routeInfo           // every /__admin route, sorted by key
}

// operation is one route of admin.yaml as the validator needs it.
type operation struct {
	id      string
	summary string
	params  []*openapi3.Parameter // query parameters, in declaration order
	body    *openapi3.Schema      // request body schema; nil = none declared
	// handlerBody: x-hermes-body: handler — the handler refuses every invalid
	// body itself, with its pinned messages and order (controls §11).
	handlerBody bool
	// stateNS: x-hermes-namespace: state — the admin namespace must be valid.
	stateNS bool
}

// routeInfo is one line of GET /__admin.
type routeInfo struct {
	key         string // "METHOD /path" relative to /__admin, ":param" segments
	operationID string
	summary     string
}

var loadContract = sync.OnceValues(func() (*contract, error) { return parseContract(hermesemulator.AdminAPI) })

// theContract returns the loaded admin.yaml; the embedded document is valid
// (TestContractLoads), so a failure is a build defect and panics.
func theContract() *contract {
	c, err := loadContract()
	if err != nil {
		panic(err)
	}
	return c
}

// parseContract loads, validates and indexes an admin.yaml document.
func parseContract(spec []byte) (*contract, error) {
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("admin: load admin.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("admin: invalid admin.yaml: %w", err)
	}
	c := &contract{ops: map[string]*operation{}}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := &operation{id: op.OperationID, summary: op.Summary,
				handlerBody: op.Extensions["x-hermes-body"] == "handler",
				stateNS:     op.Extensions["x-hermes-namespace"] == "state"}
			for _, ref := range append(slices.Clip(op.Parameters), item.Parameters...) {
				if p := ref.Value; p.In == openapi3.ParameterInQuery &&
					!slices.ContainsFunc(o.params, func(q *openapi3.Parameter) bool { return q.Name == p.Name }) {
					o.params = append(o.params, p)
				}
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					o.body = mt.Schema.Value
				}
			}
			c.ops[method+" "+echoPath(path)] = o
			if rel, ok := strings.CutPrefix(path, "/__admin"); ok {
				if rel == "" {
					rel = "/"
				}
				c.routes = append(c.routes, routeInfo{key: method + " " + colonPath(rel), operationID: o.id, summary: o.summary})
			}
		}
	}
	slices.SortFunc(c.routes, func(a, b routeInfo) int { return strings.Compare(a.key, b.key) })
	return c, nil
}

// echoPath turns OpenAPI "{name}" segments into Echo's ":name".
func echoPath(p string) string { return colonPath(p) }

func colonPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

// op returns the operation of method and Echo route path (nil when none).
func (c *contract) op(method, echoRoute string) *operation {
	return c.ops[method+" "+echoRoute]
}
