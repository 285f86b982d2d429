package emulator

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/journal"
)

var nsPrefix = regexp.MustCompile(`^/ns/([^/]+)(/.*)?$`)

// route is one vendor operation for matching (runs-api §6; wire.md §6).
type route struct {
	method, opID string
	segs         []string // "" = the {run_id} parameter
}

var routes = []route{
	{"POST", "RunCreate", []string{"v1", "runs"}},
	{"GET", "CapabilitiesGet", []string{"v1", "capabilities"}},
	{"GET", "RunGet", []string{"v1", "runs", ""}},
	{"POST", "RunStop", []string{"v1", "runs", "", "stop"}},
	{"GET", "RunEvents", []string{"v1", "runs", "", "events"}},
	{"POST", "RunApproval", []string{"v1", "runs", "", "approval"}},
	{"POST", "RunSteer", []string{"v1", "runs", "", "steer"}},
}

// match finds the operation of method and raw path: exact segments, no
// trailing slash, one non-empty {run_id}. HEAD matches the GET operations.
func match(method, rawPath string) (opID, runID string) {
	if method == "HEAD" {
		method = "GET"
	}
	if !strings.HasPrefix(rawPath, "/") {
		return "", ""
	}
	segs := strings.Split(rawPath[1:], "/")
next:
	for _, rt := range routes {
		if rt.method != method || len(rt.segs) != len(segs) {
			continue
		}
		param := ""
		for i, want := range rt.segs {
			switch {
			case want == "" && segs[i] == "":
				continue next
			case want == "":
				param = segs[i]
			case want != segs[i]:
				continue next
			}
		}
		return rt.opID, unescape(param)
	}
	return "", ""
}

// unescape percent-decodes a path segment; a malformed escape leaves it as sent.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

func requestMeta(r *http.Request) *journal.RequestMeta {
	m := &journal.RequestMeta{}
	if v, ok := r.Header["Content-Type"]; ok {
		s := strings.Join(v, ", ")
		m.ContentType = &s
	}
	if v, ok := r.Header["Content-Length"]; ok {
		cl := strings.Join(v, ", ")
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && cl != "" && strings.Trim(cl, "0123456789") == "" {
			m.BodyBytes = &n
		}
	}
	if len(r.TransferEncoding) > 0 {
		s := strings.Join(r.TransferEncoding, ", ")
		m.TransferEncoding = &s
	}
	return m
}

func writeFault(w http.ResponseWriter, f *faults.Response) {
	h := w.Header()
	if !f.NoBody {
		h.Set("Content-Type", "application/json")
	}
	for _, kv := range f.Header {
		h.Set(kv[0], kv[1])
	}
	w.WriteHeader(f.Status)
	if !f.NoBody {
		_, _ = w.Write(f.Body)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// drop closes the connection without a response (controls §6.5 step 7, runs-api
// §6.1 step 14). Over TCP the socket is reset (SO_LINGER 0) so the client sees a
// connection reset; without a hijackable connection the handler aborts.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if t, ok := conn.(*net.TCPConn); ok {
		_ = t.SetLinger(0)
	}
	_ = conn.Close()
}
