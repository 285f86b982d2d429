//go:build browser

package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBrowserWatchBound: the Watch panel keeps at most 256 Ki characters of
// a run's frames — the newest, the older ones counted as dropped — and cuts
// one frame longer than that: 100 events of 100,000 characters each (a
// client's message.delta can be megabytes) kept them all, 10 MB in the tab.
func TestBrowserWatchBound(t *testing.T) {
	srv, ctx, id := openRun(t, "")
	frames := fmt.Sprintf(`pre[data-frames=%q]`, id)
	waitText(t, ctx, "#watch-h", "0 frames")
	waitText(t, ctx, "main", "Mirrored from the control-plane stream") // the stream is live
	emit := func(delta string, n int) {
		t.Helper()
		ev := `{"event":"message.delta","delta":"` + delta + `"}`
		body := `{"events":[` + strings.Repeat(ev+",", n-1) + ev + `]}`
		res, err := http.Post(srv.URL()+"/__admin/hermes/runs/"+id+"/events", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("events: %d", res.StatusCode)
		}
	}
	emit(strings.Repeat("a", 100_000), 10)
	waitText(t, ctx, "#watch-h", "2 frames (8 older dropped)")
	if n := eval[float64](t, ctx, `document.querySelector('`+frames+`').textContent.length`); n > 256*1024 {
		t.Errorf("the panel holds %v characters, want at most %d", n, 256*1024)
	}
	emit(strings.Repeat("b", 300_000), 1)
	waitText(t, ctx, "#watch-h", "1 frame (10 older dropped)")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(text(t, ctx, frames), ": … cut: ") {
		if time.Now().After(deadline) {
			t.Fatalf("the 300,000-character frame is not cut: %d characters shown", len(text(t, ctx, frames)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserWatchBurst: a burst of 1,063 frames (one events call) shows in
// the Watch panel within moments — the newest 1,000, 63 dropped; each frame
// laid the panel's whole text out again, one by one, and froze the tab for
// longer than the test waits.
func TestBrowserWatchBurst(t *testing.T) {
	srv, ctx, id := openRun(t, "")
	waitText(t, ctx, "main", "Mirrored from the control-plane stream") // the stream is live
	events := make([]any, 1063)
	for i := range events {
		events[i] = map[string]any{"event": "message.delta", "delta": "chunk of the answer"}
	}
	if _, err := srv.Control().Events(context.Background(), id, events...); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "#watch-h", "1000 frames (63 older dropped)")
	if n := eval[float64](t, ctx, fmt.Sprintf(`document.querySelector('pre[data-frames=%q]').textContent.split('\n\n').length - 1`, id)); n != 1000 {
		t.Errorf("the panel shows %v frames, want 1000", n)
	}
}
