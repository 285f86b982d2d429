package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
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
	// none is the Empty schema of an operation that declares no request
	// body: it takes none, and `{}` counts as none (admin.yaml header).
	none *openapi3.Schema
	// handlerBody: x-hermes-body: handler — the handler refuses every invalid
	// body itself, with its pinned messages and order (controls §11).
	handlerBody bool
	// stateNS: x-hermes-namespace: state — the admin namespace must be valid.
	stateNS bool
	// responses: status → media type → schema (nil = none), for CheckResponse.
	responses map[int]map[string]*openapi3.Schema
}

// routeInfo is one line of GET /__admin.
type routeInfo struct {
	key         string // "METHOD /path" relative to /__admin, ":param" segments
	operationID string
	summary     string
}

var loadContract = sync.OnceValues(func() (*contract, error) { return parseContract(hermesemulator.AdminAPI) })

// theContract returns admin.yaml, loaded once per process on the first control
// request that needs it (~15 ms of CPU): start-up and GET /health never wait
// for it, nor share the machine with it (cold start, issue 17). The embedded
// document is valid (TestContractLoads), so a failure is a build defect and
// panics.
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
	empty := doc.Components.Schemas["Empty"]
	if empty == nil || empty.Value == nil {
		return nil, errors.New("admin: admin.yaml has no Empty schema")
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
			} else {
				o.none = empty.Value
			}
			o.responses = map[int]map[string]*openapi3.Schema{}
			for key, ref := range op.Responses.Map() {
				status, err := strconv.Atoi(key)
				if err != nil {
					return nil, fmt.Errorf("admin: %s: response key %q is not a status", o.id, key)
				}
				o.responses[status] = map[string]*openapi3.Schema{}
				for mt, m := range ref.Value.Content {
					var s *openapi3.Schema
					if m.Schema != nil {
						s = m.Schema.Value
					}
					o.responses[status][mt] = s
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

// CheckResponse checks one control-plane answer against admin.yaml: the
// request's method and path (after any /ns/<name> prefix, query excluded)
// must be a route, the status declared for it, the Content-Type one of the
// declared media types, and a JSON body must match that status's schema. It
// is for tests and self-checks: an answer admin.yaml does not allow is a bug.
func CheckResponse(method, path string, status int, header http.Header, body []byte) error {
	c := theContract()
	route := ""
	segs := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	for key := range c.ops {
		m, p, _ := strings.Cut(key, " ")
		want := strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
		if m != method || len(want) != len(segs) {
			continue
		}
		same := true
		for i, w := range want {
			if !strings.HasPrefix(w, ":") && w != segs[i] {
				same = false
				break
			}
		}
		if same && (route == "" || strings.Count(p, ":") < strings.Count(route, ":")) {
			route = p // a static segment wins over a parameter, as in the router
		}
	}
	op := c.op(method, route)
	if op == nil {
		return fmt.Errorf("admin: %s %s is not a route of admin.yaml", method, path)
	}
	media, ok := op.responses[status]
	if !ok {
		return fmt.Errorf("admin: %s: status %d is not declared", op.id, status)
	}
	ct := header.Get("Content-Type")
	schema, ok := media[ct]
	if !ok {
		return fmt.Errorf("admin: %s %d: Content-Type %q is not declared", op.id, status, ct)
	}
	if schema == nil || ct != "application/json" {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("admin: %s %d: body is not JSON: %w", op.id, status, err)
	}
	if err := schema.VisitJSON(v, openapi3.MultiErrors(), openapi3.VisitAsResponse()); err != nil {
		var msgs []string
		for _, se := range schemaErrors(err) {
			msgs = append(msgs, "at /"+strings.Join(se.JSONPointer(), "/")+": "+se.Reason)
		}
		return fmt.Errorf("admin: %s %d: %s: %w", op.id, status, body, errors.New(strings.Join(msgs, "; ")))
	}
	return nil
}
