package timeline

import (
	"fmt"
	"strings"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// fakeHost is a Host whose branches hold ints: each capture is the next
// number (also its clock and, mod 5, its records). It logs what the timeline
// asks of it.
type fakeHost struct {
	branches map[string]int
	n        int
	refuse   *runs.Error // Create's answer
	noRoom   *runs.Error // Room's answer
	log      []string
}

func newHost() *fakeHost { return &fakeHost{branches: map[string]int{"main": 0}} }

// newTimeline is a timeline of a new fakeHost with only main.
func newTimeline(max int) (*Timeline[int], *fakeHost) {
	h := newHost()
	return New[int](max, h), h
}

func (h *fakeHost) Exists(branch string) bool {
	_, ok := h.branches[branch]
	return ok
}

func (h *fakeHost) Capture(branch string) (int, float64, int) {
	h.n++
	h.branches[branch] = h.n
	return h.n, float64(h.n), h.n % 5
}

func (h *fakeHost) Committed(branch, id string) { h.log = append(h.log, "commit "+branch+" "+id) }

func (h *fakeHost) Restore(branch, _ string, s int, checkout bool) {
	h.branches[branch] = s
	h.log = append(h.log, fmt.Sprintf("restore %s %d %v", branch, s, checkout))
}

func (h *fakeHost) Create() *runs.Error {
	if h.refuse == nil {
		h.log = append(h.log, "create")
	}
	return h.refuse
}

func (h *fakeHost) Room() *runs.Error { return h.noRoom }

// took returns and clears the log.
func (h *fakeHost) took() string {
	s := strings.Join(h.log, "; ")
	h.log = nil
	return s
}
