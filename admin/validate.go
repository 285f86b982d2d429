package admin

import (
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/hermes-emulator/hermes-emulator/api"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The request validator: every control request is checked against its
// operation in admin.yaml before the handler runs (see the rules in the
// header of admin.yaml). Failures are 400 admin envelopes.

var visitOpts = []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.VisitAsRequest()}

// validate checks the query parameters of q and the parsed body (when sent)
// against op; nil means the validator lets the request through to the
// handler.
func (op *operation) validate(q url.Values, body runs.Value, hasBody bool) *runs.Error {
	// A parameter the route does not know, or one given twice, would be
	// dropped without a word: refused, naming it (the first by code point).
	names := slices.Sorted(maps.Keys(q))
	for _, name := range names {
		if !slices.ContainsFunc(op.params, func(p *openapi3.Parameter) bool { return p.Name == name }) {
			return runs.Admin(400, "unknown query parameter "+runs.Echo(name))
		}
	}
	for _, name := range names {
		if len(q[name]) > 1 {
			return runs.Admin(400, runs.Echo(name)+": expected once")
		}
	}
	for _, p := range op.params {
		vs, ok := q[p.Name]
		if !ok || p.Schema == nil || p.Schema.Value == nil {
			continue
		}
		if err := p.Schema.Value.VisitJSON(vs[0], visitOpts...); err != nil {
			msg, _ := p.Extensions["x-error"].(string)
			if msg == "" {
				msg = p.Name + ": " + firstReason(err)
			}
			return runs.Admin(400, msg)
		}
	}
	schema := op.body
	if schema == nil {
		schema = op.none // a route without a body takes none: `{}` at most
	}
	if schema == nil || !hasBody || op.handlerBody {
		return nil
	}
	value := plain(body)
	unknown, pinned := findings(schema, value, value, nil)
	// An unknown field wins (H6); then a finding whose schema pins its
	// message. Anything else is the handler's to refuse, in the pinned order.
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return runs.Admin(400, "unknown field "+runs.Echo(unknown[0])) // at most EchoLimit bytes (H9)
	}
	if len(pinned) > 0 {
		return runs.Admin(400, pinned[0])
	}
	return nil
}

// findings validates value against schema and keeps the findings the
// validator answers: the field paths of unknown fields and the pinned
// messages (x-error, x-error-value); the others are the handler's. root is
// the whole body and base the pointer of value in it. kin-openapi reports a
// value that matches no branch of an anyOf/oneOf as one finding: the unknown
// fields of the first branch that reports some are taken instead.
func findings(schema *openapi3.Schema, value, root any, base []string) (unknown, pinned []string) {
	err := schema.VisitJSON(value, visitOpts...)
	if err == nil {
		return nil, nil
	}
	for _, se := range schemaErrors(err) {
		ptr := append(slices.Clip(base), se.JSONPointer()...)
		if name, ok := unsupported(se); ok {
			unknown = append(unknown, join(fieldPath(root, ptr), name))
			continue
		}
		if se.Schema == nil {
			continue
		}
		if msg, ok := se.Schema.Extensions["x-error"].(string); ok {
			pinned = append(pinned, msg)
			continue
		}
		if msg, ok := se.Schema.Extensions["x-error-value"].(string); ok && ofType(se.Schema, se.Value) {
			pinned = append(pinned, msg)
			continue
		}
		if branches := append(slices.Clip(se.Schema.AnyOf), se.Schema.OneOf...); len(branches) > 0 && (se.SchemaField == "anyOf" || se.SchemaField == "oneOf") {
			unknown = append(unknown, branchUnknown(branches, se.Value, root, ptr)...)
		}
	}
	return unknown, pinned
}

// branchUnknown returns the unknown fields of a value that matches no branch
// of an anyOf/oneOf, as the branch the value was meant for sees them: among
// the branches of the value's type, the one that declares most of its keys
// (the first on a tie). When some branch reports no unknown field at all the
// value only has a declared field of the wrong type, and it is the handler's
// to refuse with its own message: `{"credential":5}` is not an unknown field
// credential, and `{"credential":"b","x":1}` has the unknown field x.
func branchUnknown(branches openapi3.SchemaRefs, value, root any, ptr []string) []string {
	var best []string
	bestKeys := -1
	for _, b := range branches {
		if b.Value == nil || !admits(b.Value, value) {
			continue
		}
		u, _ := findings(b.Value, value, root, ptr)
		if len(u) == 0 {
			return nil
		}
		if n := declaredKeys(b.Value, value); n > bestKeys {
			best, bestKeys = u, n
		}
	}
	return best
}

// declaredKeys counts the keys of v, an object, that schema declares (every
// key when it allows additional properties); 0 for any other value.
func declaredKeys(schema *openapi3.Schema, v any) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	if ap := schema.AdditionalProperties; ap.Has == nil || *ap.Has || ap.Schema != nil {
		return len(m)
	}
	n := 0
	for k := range m {
		if schema.Properties[k] != nil {
			n++
		}
	}
	return n
}

// admits reports whether v is of a type schema allows (any, when it names
// none).
func admits(schema *openapi3.Schema, v any) bool {
	if schema.Type == nil || len(*schema.Type) == 0 {
		return true
	}
	switch v.(type) {
	case nil:
		return schema.Nullable
	case float64:
		return schema.Type.Includes(openapi3.TypeNumber) || schema.Type.Includes(openapi3.TypeInteger)
	case string:
		return schema.Type.Includes(openapi3.TypeString)
	case bool:
		return schema.Type.Includes(openapi3.TypeBoolean)
	case []any:
		return schema.Type.Includes(openapi3.TypeArray)
	case map[string]any:
		return schema.Type.Includes(openapi3.TypeObject)
	}
	return false
}

// ofType reports whether v has the single type schema declares.
func ofType(schema *openapi3.Schema, v any) bool {
	return schema.Type != nil && len(*schema.Type) == 1 && v != nil && admits(schema, v)
}

// schemaErrors flattens kin-openapi's findings (api.SchemaErrors).
func schemaErrors(err error) []*openapi3.SchemaError {
	ses, _ := api.SchemaErrors(err)
	return ses
}

// firstReason is the reason of the first finding of err.
func firstReason(err error) string {
	if ses := schemaErrors(err); len(ses) > 0 {
		return ses[0].Reason
	}
	return err.Error()
}

// unsupported reports the property name of an additionalProperties finding
// (kin-openapi: `property "x" is unsupported`).
func unsupported(se *openapi3.SchemaError) (string, bool) {
	rest, ok := strings.CutPrefix(se.Reason, "property ")
	if !ok || !strings.HasSuffix(rest, " is unsupported") {
		return "", false
	}
	name, err := strconv.Unquote(strings.TrimSuffix(rest, " is unsupported"))
	return name, err == nil
}

// fieldPath renders a JSON pointer into v as a field path: keys joined with
// ".", array indexes as "[i]" (`events[0].x`).
func fieldPath(v any, ptr []string) string {
	var b strings.Builder
	for _, seg := range ptr {
		switch x := v.(type) {
		case []any:
			b.WriteString("[" + seg + "]")
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
				v = x[i]
			}
			continue
		case map[string]any:
			v = x[seg]
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// plain converts a body in the vendor value model to what kin-openapi
// validates: objects as map[string]any (a repeated key: the last wins, as the
// handlers read it), arrays as []any, numbers as float64 (beyond the binary64
// range: ±math.MaxFloat64, as kin-openapi refuses infinities).
func plain(v runs.Value) any {
	switch v.Kind {
	case runs.Null:
		return nil
	case runs.Bool:
		return v.Bool
	case runs.Int:
		f, _ := strconv.ParseFloat(v.Int, 64)
		return finite(f)
	case runs.Float:
		return finite(v.Float)
	case runs.String:
		return v.Str
	case runs.Array:
		out := make([]any, len(v.Arr))
		for i, e := range v.Arr {
			out[i] = plain(e)
		}
		return out
	case runs.Object:
		out := make(map[string]any, v.Obj.Len())
		for i, k := range v.Obj.Keys {
			out[k] = plain(v.Obj.Vals[i])
		}
		return out
	}
	return nil
}

func finite(f float64) float64 {
	if math.IsInf(f, 0) {
		return math.Copysign(math.MaxFloat64, f)
	}
	return f
}
