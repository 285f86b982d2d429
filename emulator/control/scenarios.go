package control

import (
	"context"
	"encoding/json"
)

// PutScenarios replaces the namespace's scenario set (docs/scenarios.md §4)
// and returns the number of scenarios. file is the set's JSON form
// ({"scenarios":[…]}): []byte or json.RawMessage verbatim (for a YAML file,
// scenarios.Load(path) then its JSON()), or any value encoding/json renders so.
// An invalid set is a 400 *Error whose message names the first bad field by
// path; nothing changes. Runs already admitted keep their scenario.
func (c *Client) PutScenarios(ctx context.Context, file any) (int, error) {
	var out struct {
		Scenarios int `json:"scenarios"`
	}
	err := c.do(ctx, "PUT", "/__admin/hermes/scenarios", file, &out)
	return out.Scenarios, err
}

// Scenarios returns the namespace's scenario set as JSON: its own, else the
// server's default (serve --scenarios), else {"scenarios":[]}.
func (c *Client) Scenarios(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.do(ctx, "GET", "/__admin/hermes/scenarios", nil, &out)
	return out, err
}

// DeleteScenarios leaves the namespace without scenarios — not even the
// server's default — until the next PutScenarios.
func (c *Client) DeleteScenarios(ctx context.Context) error {
	return c.do(ctx, "DELETE", "/__admin/hermes/scenarios", nil, nil)
}
