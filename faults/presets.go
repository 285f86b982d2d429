package faults

import "github.com/hermes-emulator/hermes-emulator/runs"

// preset is one row of the preset table of controls.md §6.4.
type preset struct {
	name, description string
	rule              *runs.Obj
}

// presetTable is the preset table of controls.md §6.4, in its order. The rule
// texts are compact JSON, so the vendor rendering reproduces them byte for byte.
var presetTable = []preset{
	{"hermes_submit_accepted_drop",
		"Admit one new run, then lose the response; retry with the same key to recover",
		mustObj(`{"operationId":"RunCreate","count":1,"effect":"hermes.accepted_drop"}`)},
	{"hermes_poll_timeout",
		"Delay one poll by 1000ms to exercise a shorter client deadline",
		mustObj(`{"operationId":"RunGet","count":1,"delayMs":1000}`)},
	{"hermes_throttled",
		"Reject one submission with the pinned default-capacity throttle envelope",
		mustObj(`{"operationId":"RunCreate","count":1,"status":429,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Too many concurrent runs (max 10)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}}`)},
	{"hermes_draining",
		"Reject one submission with the pinned gateway-draining envelope",
		mustObj(`{"operationId":"RunCreate","count":1,"status":503,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Gateway is draining existing work; retry shortly.","type":"invalid_request_error","param":null,"code":"gateway_draining"}}}`)},
	{"hermes_steer_refused",
		"Refuse the next steer after validation with the pinned steer_not_accepted conflict",
		mustObj(`{"operationId":"RunSteer","count":1,"effect":"hermes.steer_refused"}`)},
}

func mustObj(text string) *runs.Obj {
	v, err := runs.Parse([]byte(text))
	if err != nil || v.Kind != runs.Object {
		panic("faults: bad preset rule " + text)
	}
	return v.Obj
}

func findPreset(name string) *preset {
	for i := range presetTable {
		if presetTable[i].name == name {
			return &presetTable[i]
		}
	}
	return nil
}

// presetsBody is the GET /__admin/faults/presets body, built once.
var presetsBody = func() []byte {
	b := []byte(`{"presets":[`)
	for i, p := range presetTable {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = append(b, runs.QuoteString(p.name)...)
		b = append(b, `,"description":`...)
		b = append(b, runs.QuoteString(p.description)...)
		b = append(b, `,"rules":[`...)
		b = runs.AppendJSON(b, runs.ObjectValue(p.rule))
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}()

// Presets is the GET /__admin/faults/presets body (controls.md §6.4):
// {"presets":[{"name","description","rules":[<rule>]},…]} in table order, each
// preset with its one rule as written in the table. The caller must not
// change the returned bytes.
func Presets() []byte { return presetsBody }

// expand builds the stored rule of a preset (controls.md §6.4):
// {"namespace":ns, …presetRule, …overrides, "preset":name, "id":overrides.id or name},
// where a key that already exists is replaced in place. overrides may be nil.
// An "id" override is used when it is a string; otherwise the id is the name.
func expand(ns string, p *preset, overrides *runs.Obj) *runs.Obj {
	o := &runs.Obj{}
	o.Set("namespace", runs.StringValue(ns))
	for i, k := range p.rule.Keys {
		o.Set(k, p.rule.Vals[i])
	}
	id := p.name
	if overrides != nil {
		for i, k := range overrides.Keys {
			o.Set(k, overrides.Vals[i])
		}
		if v, ok := overrides.Get("id"); ok && v.Kind == runs.String {
			id = v.Str
		}
	}
	o.Set("preset", runs.StringValue(p.name))
	o.Set("id", runs.StringValue(id))
	return o
}
