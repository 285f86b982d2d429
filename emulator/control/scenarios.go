package control

import (
	"context"
	"encoding/json"

	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
)

// PutScenarios replaces the namespace's scenario set (scenarios §4)
// and returns the number of scenarios. file is the set's JSON form
// ({"scenarios":[…]}): []byte or json.RawMessage verbatim, a *scenarios.Set
// from scenarios.Load (a YAML file) or Parse, or any value encoding/json
// renders so.
// An invalid set is a 400 *Error whose message names the first bad field by
// path; nothing changes. Runs already admitted keep their scenario.
func (c *Client) PutScenarios(ctx context.Context, file any) (int, error) {
	body, err := encode(file)
	if err != nil {
		return 0, err
	}
	var out genadmin.ScenarioCount
	resp, err := c.api.HermesScenariosPutWithBody(ctx, nil, jsonType, body)
	err = c.result(resp, err, &out)
	return out.Scenarios, err
}

// Scenarios returns the namespace's scenario set as JSON: its own, else the
// server's default (serve --scenarios), else {"scenarios":[]}.
func (c *Client) Scenarios(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	resp, err := c.api.HermesScenariosGet(ctx, nil)
	err = c.result(resp, err, &out)
	return out, err
}

// DeleteScenarios leaves the namespace without scenarios — not even the
// server's default — until the next PutScenarios.
func (c *Client) DeleteScenarios(ctx context.Context) error {
	resp, err := c.api.HermesScenariosDelete(ctx, nil)
	return c.result(resp, err, nil)
}
