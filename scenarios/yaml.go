package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// maxValues bounds the values one file may expand to (YAML aliases can make a
// short file large).
const maxValues = 1_000_000

var errTooLarge = errors.New("the file expands to more than 1,000,000 values")

// decode reads a file as JSON when its first non-blank byte is '{' (JSON is YAML,
// but the JSON reader keeps number lexemes and Python's value model exactly as
// the controls read them), else as YAML.
func decode(data []byte) (runs.Value, error) {
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		v, err := runs.Parse(data)
		if err != nil {
			return runs.Value{}, err
		}
		return v, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, next yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) { // EOF: no document, null
		return runs.Value{}, yamlError(err)
	}
	// One file is one value, as JSON's extra data after the value is refused:
	// a second document (files joined with "---") would otherwise go unread,
	// and unvalidated. An empty one (a trailing "---") holds nothing.
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return runs.Value{}, yamlError(err)
	case len(next.Content) > 0 && !(next.Content[0].Kind == yaml.ScalarNode && next.Content[0].ShortTag() == "!!null"):
		return runs.Value{}, fmt.Errorf("invalid YAML: line %d: a second document (a scenario file is one)", next.Line)
	}
	budget := maxValues
	return fromNode(&doc, &budget, 0)
}

func yamlError(err error) error {
	return fmt.Errorf("invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
}

// fromNode converts a YAML node at nesting depth (the containers around it)
// to the JSON value model: mappings to objects (keys in order), sequences to
// arrays, and scalars by their resolved tag (null, bool, int, float;
// everything else is a string). Nesting deeper than runs.MaxDepth is
// refused, as the JSON reader does, so that the set's JSON form is a body
// PUT takes; so is a key given twice in one mapping (YAML keys are unique:
// a JSON object would keep the second value only, and steps written twice
// would lose the first list unread).
func fromNode(n *yaml.Node, budget *int, depth int) (runs.Value, error) {
	if *budget--; *budget < 0 {
		return runs.Value{}, errTooLarge
	}
	if (n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode) && depth >= runs.MaxDepth {
		return runs.Value{}, fmt.Errorf("invalid YAML: line %d: nesting deeper than %d", n.Line, runs.MaxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return runs.NullValue(), nil
		}
		return fromNode(n.Content[0], budget, depth)
	case yaml.AliasNode:
		return fromNode(n.Alias, budget, depth)
	case yaml.SequenceNode:
		arr := make([]runs.Value, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromNode(c, budget, depth+1)
			if err != nil {
				return runs.Value{}, err
			}
			arr = append(arr, v)
		}
		return runs.ArrayValue(arr...), nil
	case yaml.MappingNode:
		o := &runs.Obj{}
		first := map[string]int{} // the line of each key
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return runs.Value{}, fmt.Errorf("invalid YAML: line %d: mapping keys must be scalars", k.Line)
			}
			if line, ok := first[k.Value]; ok {
				return runs.Value{}, fmt.Errorf("invalid YAML: line %d: mapping key %s already defined at line %d", k.Line, strconv.Quote(k.Value), line)
			}
			first[k.Value] = k.Line
			v, err := fromNode(n.Content[i+1], budget, depth+1)
			if err != nil {
				return runs.Value{}, err
			}
			o.Set(k.Value, v)
		}
		return runs.ObjectValue(o), nil
	}
	return scalar(n)
}

func scalar(n *yaml.Node) (runs.Value, error) {
	switch n.ShortTag() {
	case "!!null":
		return runs.NullValue(), nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return runs.Value{}, fmt.Errorf("invalid YAML: line %d: %v", n.Line, err)
		}
		return runs.BoolValue(b), nil
	case "!!int":
		i, ok := new(big.Int).SetString(strings.ReplaceAll(n.Value, "_", ""), 0)
		if !ok {
			return runs.Value{}, fmt.Errorf("invalid YAML: line %d: bad integer %q", n.Line, n.Value)
		}
		return runs.Value{Kind: runs.Int, Int: i.String()}, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return runs.Value{}, fmt.Errorf("invalid YAML: line %d: %v", n.Line, err)
		}
		// JSON has no NaN or infinity: no control body can hold one, and the
		// set's JSON form (GET /__admin/hermes/scenarios) must stay JSON.
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return runs.Value{}, fmt.Errorf("invalid YAML: line %d: %s is not a finite number", n.Line, n.Value)
		}
		return runs.FloatValue(f), nil
	}
	return runs.StringValue(n.Value), nil
}
