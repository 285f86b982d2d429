package emulator_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// GET /__admin/stream when a branch's whole state is replaced: a checkout, main
// moved back by x-mockingbird-at on a mutating request and a snapshot restore
// each send branch.restored (then the clock they restored), and a reset sends
// namespace.reset for each namespace it emptied — the exact bytes, in order.
func TestStreamStateReplaced(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.ns = "t"
	x.start()
	x.ns = "s"
	first := x.post("/v1/runs", `{"input":"synthetic"}`)
	x.want(first, 202, "")
	a := first.field(t, "run_id")
	x.want(x.observe(a, `{"status":"running"}`), 200, "")
	x.want(x.post("/__admin/snapshots", ""), 201, `{"id":"snap_1","namespace":"s","records":3}`)
	cp2, cp3, cp4 := first.Header.Get("X-Mockingbird-Checkpoint"), "cp_00000003", "cp_00000004"
	if cp2 != "cp_00000002" || !bytes.Contains(x.get("/__admin/timeline").Body, []byte(`"branches":{"main":"`+cp4+`"}`)) {
		t.Fatalf("checkpoints %s, %s", cp2, x.get("/__admin/timeline"))
	}
	clock := x.get("/__admin/clock").String() // frozen: a checkout restores it as it is

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", x.srv.URL()+"/__admin/stream?all=1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+cp2+`"}`), 200, "")
	again := x.post("/v1/runs", `{"input":"again"}`, "X-Mockingbird-At", cp3)
	x.want(again, 202, "")
	b, cp5 := again.field(t, "run_id"), again.Header.Get("X-Mockingbird-Checkpoint")
	x.want(x.post("/__admin/snapshots/snap_1/restore", ""), 200, "")
	x.want(x.post("/__admin/reset", ""), 200, `{"status":"ok","reset":["s"]}`)
	x.want(x.post("/__admin/reset?all=1", ""), 200, `{"status":"ok","reset":["s","t"]}`)
	x.advance("1") // the last frame
	moved := x.get("/__admin/clock").String()

	frame := func(kind, data string) string { return "event: " + kind + "\ndata: " + data + "\n\n" }
	restored := func(cp string) string {
		return frame("branch.restored", `{"kind":"branch.restored","namespace":"s","branch":"main","checkpoint":"`+cp+`"}`) +
			frame("clock", `{"kind":"clock","clock":`+clock+`}`)
	}
	reset := func(ns string) string {
		return frame("namespace.reset", `{"kind":"namespace.reset","namespace":"`+ns+`"}`)
	}
	want := restored(cp2) +
		restored(cp3) +
		frame("run.created", `{"kind":"run.created","namespace":"s","branch":"main","run_id":"`+b+`","status":"queued"}`) +
		frame("checkpoint", `{"kind":"checkpoint","namespace":"s","branch":"main","checkpoint":"`+cp5+`"}`) +
		restored(cp4) +
		reset("s") +
		reset("s") + reset("t") +
		frame("clock", `{"kind":"clock","clock":`+moved+`}`)
	last := frame("clock", `{"kind":"clock","clock":`+moved+`}`)
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte(last)) {
		n, err := resp.Body.Read(buf)
		got = bytes.ReplaceAll(append(got, buf[:n]...), []byte(": keepalive\n\n"), nil)
		if err != nil {
			t.Fatalf("stream ended (%v) after\n%s", err, got)
		}
	}
	if string(got) != want {
		t.Fatalf("stream\n%s\nwant\n%s", got, want)
	}
}
