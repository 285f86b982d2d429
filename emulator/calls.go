package emulator

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// calls are the requests in the pipeline: the shutdown log line names them,
// and Close waits for the last one to return before it closes the gateway and
// the store.
type calls struct {
	mu   sync.Mutex
	reqs map[*http.Request]struct{}
	idle chan struct{} // made by wait, closed when the last call ends
}

func (c *calls) begin(r *http.Request) {
	c.mu.Lock()
	if c.reqs == nil {
		c.reqs = map[*http.Request]struct{}{}
	}
	c.reqs[r] = struct{}{}
	c.mu.Unlock()
}

func (c *calls) end(r *http.Request) {
	c.mu.Lock()
	delete(c.reqs, r)
	if len(c.reqs) == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
	c.mu.Unlock()
}

// wait returns true once no call is in progress, or false when ctx ends first.
func (c *calls) wait(ctx context.Context) bool {
	c.mu.Lock()
	if len(c.reqs) == 0 {
		c.mu.Unlock()
		return true
	}
	if c.idle == nil {
		c.idle = make(chan struct{})
	}
	idle := c.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-ctx.Done():
		return false
	}
}

// names counts the calls in progress and names up to ten of them
// ("POST /v1/runs, GET /v1/runs/x").
func (c *calls) names() (n int, names string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var some []string
	for r := range c.reqs {
		if len(some) < 10 {
			some = append(some, r.Method+" "+runs.Echo(r.URL.EscapedPath()))
		}
	}
	return len(c.reqs), strings.Join(some, ", ")
}
