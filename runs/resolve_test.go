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
	for _, tc := range cases {
		keep, n := ResolveApprovals(queue, &tc.ans)
		if n != tc.resolved || !reflect.DeepEqual(keep, tc.keep) {
			t.Errorf("%s: resolved %d keep %v; want %d %v", tc.name, n, keep, tc.resolved, tc.keep)
		}
	}
	if keep, n := ResolveApprovals(nil, &ApprovalAnswer{}); n != 0 || keep != nil {
		t.Errorf("empty queue: %v %d", keep, n)
	}
	if len(queue) != 3 || queue[0] != a {
		t.Error("queue was modified")
	}
}
