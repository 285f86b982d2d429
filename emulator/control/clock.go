package control

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
)

// ClockState is the global controlled clock (controls §5).
type ClockState struct {
	Now      float64 `json:"now"` // epoch milliseconds
	Frozen   bool    `json:"frozen"`
	OffsetMs float64 `json:"offsetMs"` // live clock: now = wall clock + OffsetMs
}

// Time is Now as a time.Time (UTC).
func (s ClockState) Time() time.Time {
	return time.UnixMicro(int64(s.Now * 1000)).UTC()
}

// Clock is the clock control, from Client.Clock.
type Clock struct{ c *Client }

// Clock returns the clock control. The clock is shared by all namespaces.
func (c *Client) Clock() Clock { return Clock{c} }

// post sends one POST /__admin/clock body (controls §5), as JSON text so that
// milliseconds keep every digit.
func (k Clock) post(ctx context.Context, body string) (ClockState, error) {
	var out ClockState
	resp, err := k.c.api.ClockSetWithBody(ctx, nil, jsonType, raw(body))
	return out, k.c.result(resp, err, &out)
}

func ms(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// instant is epochMs as JSON text; NaN and ±Inf, which JSON cannot carry, are
// refused before anything is sent.
func instant(epochMs float64) (string, error) {
	if math.IsNaN(epochMs) || math.IsInf(epochMs, 0) {
		return "", fmt.Errorf("control: clock: %v is not a number of epoch milliseconds", epochMs)
	}
	return ms(epochMs), nil
}

// Get returns the clock state.
func (k Clock) Get(ctx context.Context) (ClockState, error) {
	var out ClockState
	resp, err := k.c.api.ClockGet(ctx, nil)
	return out, k.c.result(resp, err, &out)
}

// Set moves the clock to epochMs, keeping it frozen or live.
func (k Clock) Set(ctx context.Context, epochMs float64) (ClockState, error) {
	at, err := instant(epochMs)
	if err != nil {
		return ClockState{}, err
	}
	return k.post(ctx, `{"set":`+at+`}`)
}

// FreezeAt sets the clock to epochMs and freezes it there in one request,
// e.g. 1700000000000 (the base instant of the acceptance tests).
func (k Clock) FreezeAt(ctx context.Context, epochMs float64) (ClockState, error) {
	at, err := instant(epochMs)
	if err != nil {
		return ClockState{}, err
	}
	return k.post(ctx, `{"set":`+at+`,"freeze":true}`)
}

// Freeze stops the clock at its current instant.
func (k Clock) Freeze(ctx context.Context) (ClockState, error) {
	return k.post(ctx, `{"freeze":true}`)
}

// Unfreeze lets the clock run again from its current instant.
func (k Clock) Unfreeze(ctx context.Context) (ClockState, error) {
	return k.post(ctx, `{"freeze":false}`)
}

// Advance moves the clock by d (which may be negative), frozen or live; the
// emulator takes milliseconds, fractions included.
func (k Clock) Advance(ctx context.Context, d time.Duration) (ClockState, error) {
	return k.post(ctx, `{"advance":`+ms(float64(d)/float64(time.Millisecond))+`}`)
}

// Reset returns the clock to the wall clock: offset 0, live.
func (k Clock) Reset(ctx context.Context) (ClockState, error) {
	return k.post(ctx, `{"reset":true}`)
}
