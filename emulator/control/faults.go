package control

import (
	"context"
	"encoding/json"
	"fmt"

	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
)

// Fault is a fault rule (controls §6.1), as sent to AddFault and as the
// emulator stores and lists it. Zero fields are left out when sending, so
// Count and Rate, where 0 means something, are pointers. Fields the emulator
// does not know are refused (H6).
type Fault struct {
	ID          string            `json:"id,omitempty"`
	Namespace   string            `json:"namespace,omitempty"` // default: the client's namespace; "*" = all
	OperationID string            `json:"operationId,omitempty"`
	Method      string            `json:"method,omitempty"`
	PathPrefix  string            `json:"pathPrefix,omitempty"`
	Status      int               `json:"status,omitempty"`
	Body        any               `json:"body,omitempty"` // nil = {"detail":"Injected by Mockingbird"}; json.RawMessage("null") = no body
	Headers     map[string]string `json:"headers,omitempty"`
	Count       *int              `json:"count,omitempty"` // uses before the rule retires; nil = unlimited
	Rate        *float64          `json:"rate,omitempty"`  // fraction of matching requests that fire; nil = 1
	DelayMs     float64           `json:"delayMs,omitempty"`
	Drop        bool              `json:"drop,omitempty"`
	Effect      string            `json:"effect,omitempty"`
	Params      map[string]any    `json:"params,omitempty"`
	Preset      string            `json:"preset,omitempty"`

	Remaining *int `json:"remaining,omitempty"` // listed only: uses left (nil = unlimited)
	Hits      int  `json:"hits,omitempty"`      // listed only: times fired
}

// AddFault adds (or, with an existing id, replaces) a fault rule in the
// client's namespace (controls §6.2). rule is a Fault, a map or raw JSON; a
// rule with "preset" expands that preset. It returns the stored rule (the
// first rule of a preset).
func (c *Client) AddFault(ctx context.Context, rule any) (Fault, error) {
	rd, err := encode(rule)
	if err != nil {
		return Fault{}, err
	}
	var out json.RawMessage
	resp, err := c.api.FaultAddWithBody(ctx, nil, jsonType, rd)
	if err := c.result(resp, err, &out); err != nil {
		return Fault{}, err
	}
	var preset struct {
		Rules []Fault `json:"rules"`
	}
	if err := json.Unmarshal(out, &preset); err == nil && len(preset.Rules) > 0 {
		return preset.Rules[0], nil
	}
	var f Fault
	if err := json.Unmarshal(out, &f); err != nil {
		return Fault{}, fmt.Errorf("control: POST /__admin/faults: decode %s: %w", out, err)
	}
	return f, nil
}

// ApplyPreset adds the rules of a named preset (controls §6.4), e.g.
// "hermes_submit_accepted_drop" or "hermes_poll_timeout", with overrides (nil,
// a nil map or a nil pointer for none; a map or a Fault) and returns the
// stored rules.
func (c *Client) ApplyPreset(ctx context.Context, name string, overrides any) ([]Fault, error) {
	if err := need("ApplyPreset", "preset name", name); err != nil {
		return nil, err
	}
	if b, err := json.Marshal(overrides); err == nil && string(b) == "null" { // nil, a nil map or pointer
		overrides = json.RawMessage("{}") // the route refuses null overrides
	}
	rd, err := encode(overrides)
	if err != nil {
		return nil, err
	}
	var out struct {
		Rules []Fault `json:"rules"`
	}
	resp, err := c.api.PresetApplyWithBody(ctx, name, nil, jsonType, rd)
	return out.Rules, c.result(resp, err, &out)
}

// Faults lists every fault rule of every namespace, with counters
// (controls §6.3).
func (c *Client) Faults(ctx context.Context) ([]Fault, error) {
	var out struct {
		Faults []Fault `json:"faults"`
	}
	resp, err := c.api.FaultsList(ctx, nil)
	return out.Faults, c.result(resp, err, &out)
}

// DeleteFaults removes the rule with id, or every rule when id is "".
func (c *Client) DeleteFaults(ctx context.Context, id string) error {
	p := &genadmin.FaultsDeleteParams{}
	if id != "" {
		p.Id = &id
	}
	resp, err := c.api.FaultsDelete(ctx, p)
	return c.result(resp, err, nil)
}
