package gateway

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
	"github.com/hermes-emulator/hermes-emulator/timeline"
	"github.com/hermes-emulator/hermes-emulator/transport"
)

func newBoundGateway(t *testing.T, opts Options) *Gateway {
	t.Helper()
	if opts.Wall == nil {
		opts.Wall = func() float64 { return 1700000000000 }
	}
	opts.SubscribeWait = time.Millisecond
	g, err := New(storage.NewMemory(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func wantErr(t *testing.T, what string, got *runs.Error, want *runs.Error) {
	t.Helper()
	if got == nil || *got != *want {
		t.Fatalf("%s = %+v, want %+v", what, got, want)
	}
}

// H3: reads of an unknown namespace answer as for an empty one and create
// nothing; changes create it, up to --max-namespaces, past which they answer
// 429 and change nothing.
func TestNamespacesCreatedByState(t *testing.T) {
	g := newBoundGateway(t, Options{MaxNamespaces: 2})
	ctx := context.Background()
	if _, err := g.Get(Main("ghost"), "run_x"); err == nil || err.Code != "run_not_found" {
		t.Fatalf("Get = %v", err)
	}
	if _, err := g.Subscribe(ctx, Main("ghost"), "run_x", true); err == nil {
		t.Fatal("Subscribe of a ghost run")
	}
	if _, err := g.Create(Main("ghost"), Creation{Intake: runs.ErrKeyConflict}); err != runs.ErrKeyConflict {
		t.Fatalf("Create = %v", err)
	}
	if tl := g.Timeline("ghost"); len(tl.Checkpoints) != 1 || g.Head("ghost", "main") != "cp_00000001" {
		t.Fatalf("timeline of an empty namespace = %+v", tl)
	}
	if _, err := g.Select("ghost", "main", "cp_00000001", false); err != nil {
		t.Fatalf("Select = %v", err)
	}
	if page, _, err := g.Runs("ghost", "", 0, ""); err != nil || len(page) != 0 {
		t.Fatalf("Runs = %v %v", page, err)
	}
	if _, err := g.RunView("ghost", "run_x"); err == nil || err.Status != 404 || err.Message != "Run not found: run_x" {
		t.Fatalf("RunView = %v", err)
	}
	_ = g.DrainFlag("ghost")
	if names, _ := g.Reset("ghost", false); len(names) != 1 {
		t.Fatalf("Reset = %v", names)
	}
	if n := g.NamespaceCount(); n != 0 {
		t.Fatalf("%d namespaces after reads: %v", n, g.Namespaces())
	}

	if _, err := g.Create(Main("a"), Creation{Sub: &runs.Submission{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitCheckpoint("b", "main"); err != nil {
		t.Fatal(err)
	}
	full := runs.Admin(429, "too many namespaces (max 2)")
	_, err := g.Create(Main("c"), Creation{Sub: &runs.Submission{}})
	wantErr(t, "Admit in a third namespace", err, full)
	_, err = g.CommitCheckpoint("c", "main")
	wantErr(t, "CommitCheckpoint", err, full)
	_, _, err = g.Snapshot("c")
	wantErr(t, "Snapshot", err, full)
	_, err = g.Branch("c", "f", "")
	wantErr(t, "Branch", err, full)
	_, err = g.Select("c", "f", "", true)
	wantErr(t, "Select of a new branch", err, full)
	wantErr(t, "SetDraining", g.SetDraining("c", true), full)
	if got := fmt.Sprint(g.Namespaces()); got != "[a b]" {
		t.Fatalf("namespaces %s", got)
	}
	if _, err := g.Create(Main("a"), Creation{Sub: &runs.Submission{}}); err != nil {
		t.Fatalf("an existing namespace: %v", err)
	}
	// Reset all releases the namespaces' state; they stay listed (controls §4.1).
	if names, _ := g.Reset("", true); fmt.Sprint(names) != "[a b]" {
		t.Fatalf("reset all = %v", names)
	}
	if page, _, _ := g.Runs("a", "", 0, ""); len(page) != 0 {
		t.Fatalf("after reset all: %d runs", len(page))
	}
}

// H5: a subscriber that does not read holds at most --sse-buffer-bytes of
// frames; past it the stream closes with a WARN naming the run, and later
// frames are undelivered (the transport is gone).
func TestSSEBufferBound(t *testing.T) {
	var log bytes.Buffer
	frame := len("data: ") + len(`{"event":"message.delta","run_id":"run_4e685a726271445348426a4a70783364","timestamp":1700000000.0,"delta":"x"}`) + 2
	g := newBoundGateway(t, Options{SSEBufferBytes: 2*frame + frame/2, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	a, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sub, err := g.Subscribe(ctx, Main("default"), a.RunID, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	delta, _ := runs.Parse([]byte(`{"events":[{"event":"message.delta","delta":"x"}]}`))
	for i := range 2 {
		if out, err := g.Events("default", a.RunID, delta, true); err != nil || out.Buffered != 1 {
			t.Fatalf("events %d: %+v %v", i, out, err)
		}
	}
	if strings.Contains(log.String(), "WARN") {
		t.Fatalf("warned within the bound: %s", log.String())
	}
	if err := g.checkTransports(); err != nil {
		t.Fatal(err)
	}
	// The frame past the bound is not appended: buffered counts it out
	// (controls §11.2 "number appended to a transport"); it counted every
	// event of a run that had a transport when the control began.
	if out, err := g.Events("default", a.RunID, delta, true); err != nil || out.Emitted != 1 || out.Buffered != 0 {
		t.Fatalf("events past the bound: %+v %v (want emitted 1, buffered 0)", out, err)
	}
	select {
	case <-sub.Aborted(): // a writer blocked on the client gives up
	default:
		t.Fatal("Aborted not closed after the bound")
	}
	if _, next := sub.Next(ctx, time.Second); next != transport.Aborted {
		t.Fatalf("after the bound: %v, want Aborted", next)
	}
	if got := log.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "run_id="+a.RunID) {
		t.Fatalf("log %q", got)
	}
	if out, err := g.Events("default", a.RunID, delta, true); err != nil || out.Buffered != 0 {
		t.Fatalf("after the close: %+v %v (want nothing buffered)", out, err)
	}
	if _, err := g.Subscribe(ctx, Main("default"), a.RunID, true); err == nil {
		t.Fatal("the transport outlived its close")
	}
	if err := g.checkTransports(); err != nil {
		t.Fatal(err)
	}
}

// H7: with 1000 snapshots pinning old checkpoints, committing one more costs
// O(1) amortised retention work — the pinned ones are never walked past.
func TestCheckpointRetentionWork(t *testing.T) {
	g := newBoundGateway(t, Options{MaxCheckpoints: 10})
	for range 1000 {
		if _, _, err := g.Snapshot("default"); err != nil {
			t.Fatal(err)
		}
	}
	ns := g.spaces["default"]
	before := ns.tl.Examined()
	const commits = 1000
	for range commits {
		if _, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}}); err != nil {
			t.Fatal(err)
		}
	}
	if work := ns.tl.Examined() - before; work > 2*commits {
		t.Fatalf("%d checkpoints examined for %d commits", work, commits)
	}
	// Retention kept the 1000 pinned and the head, and evicted the rest.
	tl := g.Timeline("default")
	if len(tl.Checkpoints) != 1001 {
		t.Fatalf("%d checkpoints retained", len(tl.Checkpoints))
	}
	if err := g.checkTimelines(); err != nil {
		t.Fatal(err)
	}
}

// Reset releases what a snapshot of the namespace held: the snapshot stays,
// and restores nothing (409 no checkpoint).
func TestResetReleasesSnapshots(t *testing.T) {
	g := newBoundGateway(t, Options{})
	if _, err := g.Create(Main("a"), Creation{Sub: &runs.Submission{}}); err != nil {
		t.Fatal(err)
	}
	id, _, err := g.Snapshot("a")
	if err != nil {
		t.Fatal(err)
	}
	cp, old := g.Head("a", "main"), g.spaces["a"].tl // the snapshot's checkpoint and timeline
	if _, err := g.Reset("a", false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.snaps.Find("a", id, old); err == nil {
		t.Fatal("the snapshot still holds the namespace's timeline")
	}
	if err := g.checkTimelines(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "RestoreSnapshot", g.RestoreSnapshot("a", id), runs.Admin(409, "no checkpoint "+cp))
	if err := g.DeleteSnapshot(id); err != nil {
		t.Fatal(err)
	}
}

// Hardening H9: an unknown checkpoint or snapshot id is quoted cut to
// runs.EchoLimit bytes, however long the id a client sent.
func TestUnknownIdsEchoBounded(t *testing.T) {
	g, _ := newTestGateway(t, "")
	long := strings.Repeat("x", 5000)
	cut := long[:runs.EchoLimit]
	if _, err := g.CommitCheckpoint("a", "main"); err != nil {
		t.Fatal(err)
	}
	_, err := g.Branch("a", "b", long)
	wantErr(t, "Branch", err, runs.Admin(409, "no checkpoint "+cut))
	wantErr(t, "Checkout", g.Checkout("a", "main", long), runs.Admin(409, "no checkpoint "+cut))
	_, err = g.Select("a", "main", long, false)
	wantErr(t, "Select", err, runs.Admin(409, "no checkpoint "+cut))
	wantErr(t, "RestoreSnapshot", g.RestoreSnapshot("a", long), runs.Admin(404, "no snapshot "+cut))
	wantErr(t, "DeleteSnapshot", g.DeleteSnapshot(long), runs.Admin(404, "no snapshot "+cut))
}

// H3: the process holds at most timeline.MaxSnapshots snapshots; one more
// answers 409 and creates nothing (not even its namespace); deleting one makes
// room again.
func TestSnapshotBound(t *testing.T) {
	g := newBoundGateway(t, Options{})
	var first string
	for i := range timeline.MaxSnapshots {
		id, _, err := g.Snapshot("a")
		if err != nil {
			t.Fatalf("snapshot %d: %v", i+1, err)
		}
		if i == 0 {
			first = id
		}
	}
	_, _, err := g.Snapshot("b")
	wantErr(t, "Snapshot past the bound", err, runs.Admin(409, "too many snapshots (max 10000)"))
	if got := fmt.Sprint(g.Namespaces()); got != "[a]" {
		t.Fatalf("namespaces %s", got)
	}
	if err := g.DeleteSnapshot(first); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Snapshot("b"); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}

// steerBytes is the bytes allocated by n steers of run id, each committing its
// checkpoint as RunSteer does.
func steerBytes(t *testing.T, g *Gateway, id string, n int) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := g.Steer(Main("default"), id, "a", nil, false); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A steer costs the same however many texts the run has queued: the queue is
// shared with the checkpoints that hold it, not copied into each (a copy
// made 30,000 one-byte steers hold 1.4 GB through the retained checkpoints,
// and each steer slower than the last).
func TestSteerCostIndependentOfQueue(t *testing.T) {
	g := newBoundGateway(t, Options{})
	a, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	running := runs.ObjectValue(&runs.Obj{Keys: []string{"status"}, Vals: []runs.Value{runs.StringValue("running")}})
	if _, err := g.Observe("default", a.RunID, running, true); err != nil {
		t.Fatal(err)
	}
	const n = 200
	early := steerBytes(t, g, a.RunID, n)
	steerBytes(t, g, a.RunID, 5000)
	late := steerBytes(t, g, a.RunID, n)
	if late > 2*early {
		t.Fatalf("%d steers allocate %d bytes with 5200 queued, %d with none: the queue is copied", n, late, early)
	}
	v, verr := g.RunView("default", a.RunID)
	if verr != nil || len(v.Steers) != 2*n+5000 || v.QueuedSteers != 2*n+5000 || v.Steers[0] != "a" {
		t.Fatalf("run view: %d steers, %d queued, %v", len(v.Steers), v.QueuedSteers, verr)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(); err != nil {
		t.Fatal(err)
	}
}

// The process holds at most MaxBranches branches besides the mains (each head
// pins a checkpoint that is never evicted): one more, from a vendor request's
// x-mockingbird-branch, POST /__admin/branches/:name, POST /__admin/checkpoints
// or a checkout, answers 409 and creates nothing; existing branches still
// work, and a reset of a namespace gives its branches back.
func TestBranchBound(t *testing.T) {
	g := newBoundGateway(t, Options{MaxCheckpoints: 10})
	for i := range 10000 { // MaxBranches
		ns := "a"
		if i%2 == 1 {
			ns = "b"
		}
		if _, err := g.Select(ns, fmt.Sprintf("b%d", i), "", false); err != nil {
			t.Fatalf("branch %d: %v", i+1, err)
		}
	}
	full := runs.Admin(409, "too many branches (max 10000)")
	checkpoints := len(g.Timeline("a").Checkpoints)
	_, err := g.Select("a", "one-more", "", false)
	wantErr(t, "Select of a new branch", err, full)
	_, err = g.Select("a", "one-more", "", true)
	wantErr(t, "Select of a new branch, mutating", err, full)
	_, err = g.Branch("a", "one-more", "")
	wantErr(t, "Branch", err, full)
	_, err = g.CommitCheckpoint("a", "one-more")
	wantErr(t, "CommitCheckpoint", err, full)
	wantErr(t, "Checkout", g.Checkout("a", "one-more", g.Head("a", "main")), full)
	if n := len(g.Timeline("a").Checkpoints); n != checkpoints {
		t.Fatalf("%d checkpoints, %d before the refusals", n, checkpoints)
	}
	if h := g.Head("a", "one-more"); h != "" {
		t.Fatalf("the refused branch has head %s", h)
	}
	// Existing branches and main still work.
	if _, err := g.Select("a", "b0", "", true); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Create(Target{NS: "a", Branch: "b0"}, Creation{Sub: &runs.Submission{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitCheckpoint("a", "main"); err != nil {
		t.Fatal(err)
	}
	// A reset gives a namespace's branches back.
	if _, err := g.Reset("b", false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Branch("a", "one-more", ""); err != nil {
		t.Fatalf("after a reset: %v", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(); err != nil {
		t.Fatal(err)
	}
}

// An approval queued by observe, and one answered (the oldest, by default),
// cost the same however many are pending: like the steer queue, the approval
// queue is shared with the checkpoints that hold it, not copied into each
// (20,000 queued approvals took the process to 540 MB).
func TestApprovalCostIndependentOfQueue(t *testing.T) {
	g := newBoundGateway(t, Options{})
	a, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	waiting := runs.ObjectValue(&runs.Obj{Keys: []string{"status"}, Vals: []runs.Value{runs.StringValue("waiting_for_approval")}})
	queue := func(n int) {
		for range n {
			if _, err := g.Observe("default", a.RunID, waiting, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	answer := func(n int) {
		for range n {
			if _, err := g.Approve(Main("default"), a.RunID, &runs.ApprovalAnswer{Choice: "once"}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	cost := func(f func(int), n int) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f(n)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	const n = 200
	earlyQ, earlyA := cost(queue, n), cost(answer, n)
	queue(5000)
	lateQ, lateA := cost(queue, n), cost(answer, n)
	if lateQ > 2*earlyQ || lateA > 2*earlyA {
		t.Fatalf("%d observes allocate %d bytes with 5000 pending, %d with none; %d answers %d, %d: the queue is copied",
			n, lateQ, earlyQ, n, lateA, earlyA)
	}
	v, verr := g.RunView("default", a.RunID)
	if verr != nil || len(v.Approvals) != 5000 || v.PendingApprovals != 5000 {
		t.Fatalf("run view: %d approvals, %d pending, %v", len(v.Approvals), v.PendingApprovals, verr)
	}
	// The oldest left are those queued after the first 400 (ids 401 on).
	if want := runs.ApprovalID("hermes", 401); !strings.Contains(string(v.Approvals[0]), want) {
		t.Fatalf("oldest pending %s, want request_id %s", v.Approvals[0], want)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(); err != nil {
		t.Fatal(err)
	}
}

// A change to a run keeps the fields it rewrites, not the whole record again:
// a run whose record echoes a 1 MB session_id, stopped again and again (each
// stop commits a checkpoint that keeps the record), kept a new rendering of
// the whole record per stop — 300 stops of a 2 MB run took the process to
// 900 MB. A large record is kept as its value (state.LargeRecord), whose
// versions share the session_id. The record still reads the same.
func TestChangeKeepsNoCopyOfALargeRecord(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		g := newBoundGateway(t, Options{})
		big := strings.Repeat("s", 1<<20)
		c := Creation{Sub: &runs.Submission{SessionID: runs.StringValue(big), HasSession: true}}
		if keyed {
			c.Key, c.Fingerprint = "k", "f"
		}
		a, err := g.Create(Main("default"), c)
		if err != nil {
			t.Fatal(err)
		}
		// The first stop changes the status: a keyed run's durable copy is
		// rewritten then (the persist rule), the later ones only the cache.
		if _, err := g.Stop(Main("default"), a.RunID); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range 50 {
			if _, err := g.Stop(Main("default"), a.RunID); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n := int64(after.HeapAlloc) - int64(before.HeapAlloc); n > 1<<20 {
			t.Fatalf("keyed %v: 50 stops of a run with a 1 MB session_id kept %d bytes", keyed, n)
		}
		body, gerr := g.Get(Main("default"), a.RunID)
		want := `{"object":"hermes.run","run_id":"` + a.RunID + `","status":"stopping","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` +
			big + `","model":"hermes-agent","last_event":"run.stopping"}`
		if gerr != nil || string(body) != want {
			t.Fatalf("keyed %v: record %.200s…, %v", keyed, body, gerr)
		}
	}
}
