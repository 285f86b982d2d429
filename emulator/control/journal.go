package control

import (
	"context"
	"strconv"

	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
)

// The journal, metrics and timeline (controls §7–§9).

// RequestsQuery selects a page of the request journal; zero fields are left
// out.
type RequestsQuery struct {
	Since       string // epoch ms or ISO-8601
	Status      int    // exact status
	OperationID string
	Limit       int    // page size, 1–10000 (default 1000)
	Cursor      string // the Next of the previous page
	All         bool   // every namespace
}

// Requests returns one page of journal entries, oldest first; its Next (nil
// on the last page) is the Cursor of the page of older entries.
func (c *Client) Requests(ctx context.Context, q RequestsQuery) (genadmin.JournalPage, error) {
	p := &genadmin.RequestsListParams{}
	set := func(dst **string, v string) {
		if v != "" {
			*dst = &v
		}
	}
	set(&p.Since, q.Since)
	if q.Status != 0 {
		set(&p.Status, strconv.Itoa(q.Status))
	}
	set(&p.OperationId, q.OperationID)
	if q.Limit != 0 {
		set(&p.Limit, strconv.Itoa(q.Limit))
	}
	set(&p.Cursor, q.Cursor)
	if q.All {
		one := genadmin.RequestsListParamsAllN1
		p.All = &one
	}
	var out genadmin.JournalPage
	resp, err := c.api.RequestsList(ctx, p)
	return out, c.result(resp, err, &out)
}

// Count is WireMock-style verification: the number of journal entries that
// match every set field of f (e.g. {OperationId: "RunCreate", Status: 202});
// f.Namespace defaults to the client's namespace, "*" counts every one.
func (c *Client) Count(ctx context.Context, f genadmin.CountFilter) (int, error) {
	var out genadmin.CountResult
	resp, err := c.api.RequestsCount(ctx, nil, f)
	return out.Count, c.result(resp, err, &out)
}

// Metrics returns the request metrics (controls §9).
func (c *Client) Metrics(ctx context.Context) (genadmin.Metrics, error) {
	var out genadmin.Metrics
	resp, err := c.api.MetricsGet(ctx, nil)
	return out, c.result(resp, err, &out)
}

// Timeline returns the namespace's branch heads and checkpoints (controls §8.5).
func (c *Client) Timeline(ctx context.Context) (genadmin.Timeline, error) {
	var out genadmin.Timeline
	resp, err := c.api.TimelineGet(ctx, nil)
	return out, c.result(resp, err, &out)
}

// Checkpoint commits a checkpoint on branch ("" = main) and returns its id
// (controls §8.3).
func (c *Client) Checkpoint(ctx context.Context, branch string) (string, error) {
	body := genadmin.CheckpointCreateJSONRequestBody{}
	if branch != "" {
		body.Branch = &branch
	}
	var out genadmin.CheckpointRef
	resp, err := c.api.CheckpointCreate(ctx, nil, body)
	return out.Id, c.result(resp, err, &out)
}

// Checkout moves branch to checkpoint and restores its state, the clock and
// the fault RNG (controls §8.5).
func (c *Client) Checkout(ctx context.Context, branch, checkpoint string) error {
	if err := need("Checkout", "branch", branch); err != nil {
		return err
	}
	if err := need("Checkout", "checkpoint", checkpoint); err != nil {
		return err
	}
	resp, err := c.api.BranchCheckout(ctx, branch, nil, genadmin.BranchCheckoutJSONRequestBody{Checkpoint: checkpoint})
	return c.result(resp, err, nil)
}
