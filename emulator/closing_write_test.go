package emulator_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// stalledClosing is a stream's ResponseWriter on a client that stops reading
// just before ": stream closed": that write blocks until a write deadline in
// the past is set (as on a socket), then fails.
type stalledClosing struct {
	*httptest.ResponseRecorder
	mu      sync.Mutex
	blocked chan struct{} // closed when the closing write blocks
	cut     chan struct{} // closed when a past write deadline is set
	isCut   bool
}

func (w *stalledClosing) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte(": stream closed")) {
		close(w.blocked)
		<-w.cut
		return 0, os.ErrDeadlineExceeded
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseRecorder.Write(b)
}

func (w *stalledClosing) Flush() {}

func (w *stalledClosing) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !t.IsZero() && !t.After(time.Now()) && !w.isCut {
		w.isCut = true
		close(w.cut)
	}
	return nil
}

// The write of ": stream closed" is a write like the frames': when the
// transport is destroyed under it (here by Close; reset, checkout and restart
// alike) while the client does not read, it is cut and the stream ends,
// instead of waiting for the client for ever (and Close for its grace).
func TestClosingCommentWriteIsCut(t *testing.T) {
	srv, err := emulator.New(emulator.Options{NoListener: true})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	do := func(method, path, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
		return w
	}
	r := do("POST", "/v1/runs", `{"input":"x"}`)
	if r.Code != 202 {
		t.Fatalf("create: %d %s", r.Code, r.Body)
	}
	_, rest, _ := strings.Cut(r.Body.String(), `"run_id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	w := &stalledClosing{ResponseRecorder: httptest.NewRecorder(), blocked: make(chan struct{}), cut: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/runs/"+id+"/events", nil))
	}()
	for i := 0; ; i++ { // until subscribed
		v := do("GET", "/__admin/hermes/runs/"+id, "")
		if strings.Contains(v.Body.String(), `"subscribed"`) {
			break
		}
		if i > 500 {
			t.Fatalf("never subscribed: %s", v.Body)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if r := do("POST", "/__admin/hermes/runs/"+id+"/observe", `{"status":"completed"}`); r.Code != 200 {
		t.Fatalf("observe: %d %s", r.Code, r.Body)
	}
	select {
	case <-w.blocked:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream never wrote its closing comment")
	}
	_ = srv.Close()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("the closing comment's blocked write was not cut: the stream did not end")
	}
}
