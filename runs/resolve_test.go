package runs

import (
	"reflect"
	"testing"
)

func TestResolveApprovals(t *testing.T) { // acceptance 126–128
	entry := func(id string) *Obj { return &Obj{Keys: []string{"request_id"}, Vals: []Value{StringValue(id)}} }
	a, b, c := entry("a"), entry("b"), entry("c")
	queue := []*Obj{a, b, c}
	cases := []struct {
		name     string
		ans      ApprovalAnswer
		keep     []*Obj
		resolved int
	}{
		{"oldest first", ApprovalAnswer{}, []*Obj{b, c}, 1},
		{"all", ApprovalAnswer{ResolveAll: true}, nil, 3},
		{"by request_id", ApprovalAnswer{HasRequestID: true, RequestID: "b"}, []*Obj{a, c}, 1},
		{"request_id wins over all", ApprovalAnswer{HasRequestID: true, RequestID: "c", ResolveAll: true}, []*Obj{a, b}, 1},
		{"unknown request_id", ApprovalAnswer{HasRequestID: true, RequestID: "z"}, []*Obj{a, b, c}, 0},
	}
	at := func(i int) *Obj { return queue[i] }
	for _, tc := range cases {
		from, to := ResolveApprovals(len(queue), at, &tc.ans)
		keep := append(append([]*Obj(nil), queue[:from]...), queue[to:]...)
		if len(keep) == 0 {
			keep = nil
		}
		if to-from != tc.resolved || !reflect.DeepEqual(keep, tc.keep) {
			t.Errorf("%s: resolved %d keep %v; want %d %v", tc.name, to-from, keep, tc.resolved, tc.keep)
		}
	}
	if from, to := ResolveApprovals(0, at, &ApprovalAnswer{}); from != to {
		t.Errorf("empty queue: [%d, %d)", from, to)
	}
	if len(queue) != 3 || queue[0] != a {
		t.Error("queue was modified")
	}
}

func TestFindApproval(t *testing.T) {
	entry := func(id Value) *Obj { return &Obj{Keys: []string{"request_id"}, Vals: []Value{id}} }
	queue := []*Obj{entry(StringValue("a")), entry(IntValue(7)), entry(StringValue("b")), {}, entry(StringValue("b"))}
	at := func(i int) *Obj { return queue[i] }
	cases := []struct {
		n    int
		id   string
		want int
	}{
		{5, "a", 0},
		{5, "b", 2},  // the first of two
		{5, "7", -1}, // a number is no request_id
		{5, "", -1},  // nor a missing one
		{5, "A", -1}, // exactly: case counts
		{2, "b", -1}, // only the first n entries
		{0, "a", -1},
	}
	for _, tc := range cases {
		if got := FindApproval(tc.n, at, tc.id); got != tc.want {
			t.Errorf("FindApproval(%d, %q) = %d, want %d", tc.n, tc.id, got, tc.want)
		}
	}
}
