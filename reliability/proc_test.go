//go:build reliability

package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bin is the emulator binary, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hermes-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "hermes-emulator")
	args := []string{"build", "-o", bin}
	if os.Getenv("RELIABILITY_RACE") != "" {
		args = append(args, "-race") // the emulator process runs under the race detector
	}
	build := exec.Command("go", append(args, "github.com/hermes-emulator/hermes-emulator/cmd/hermes-emulator")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "reliability: go build:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is one running emulator process.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	out  *lockedBuf // stdout and stderr
	done chan struct{}
	err  error // Wait's result, valid after done
}

// lockedBuf collects process output; the first "listening on" line is sent on
// ready.
type lockedBuf struct {
	mu    sync.Mutex
	b     bytes.Buffer
	pos   int // bytes already scanned for the line
	ready chan string
	sent  bool
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	for !l.sent {
		s := l.b.String()[l.pos:]
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		l.pos += i + 1
		if rest, ok := strings.CutPrefix(s[:i], "hermes-emulator listening on "); ok {
			l.sent = true
			l.ready <- strings.TrimSpace(rest)
		}
	}
	return len(p), nil
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs `hermes-emulator serve --port 0 --db db --log off extra…` and
// waits for its URL. The process is killed when the test ends.
func start(t *testing.T, db string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "--port", "0", "--db", db, "--log", "off"}, extra...)
	p := &proc{t: t, cmd: exec.Command(bin, args...), out: &lockedBuf{ready: make(chan string, 1)}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if strings.Contains(p.out.String(), "WARNING: DATA RACE") {
			t.Errorf("the emulator process reported a data race:\n%s", p.out)
		}
	})
	select {
	case p.url = <-p.out.ready:
	case <-p.done:
		t.Fatalf("emulator exited before listening: %v\n%s", p.err, p.out)
	case <-time.After(60 * time.Second):
		p.kill()
		t.Fatalf("emulator did not print its URL within 60s:\n%s", p.out)
	}
	return p
}

// kill sends SIGKILL (if still running) and waits for the process to end.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// alive reports whether the process is still running.
func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// peakRSS reads VmHWM (peak resident set size, kB) of the running process.
func (p *proc) peakRSS() int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// newClient returns an HTTP client for many concurrent requests to one host.
func newClient(conns int) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// reply is a response as the suite reads it.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// field returns a top-level string field of a JSON object body ("" if absent).
func (r reply) field(k string) string {
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	s, _ := m[k].(string)
	return s
}

// call sends one request; hdr are name/value pairs.
func call(ctx context.Context, c *http.Client, method, u, body string, hdr ...string) (reply, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return reply{}, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{resp.StatusCode, resp.Header, b}, nil
}

// must is call for requests that have to get an answer.
func (p *proc) must(c *http.Client, method, path, body string, hdr ...string) reply {
	p.t.Helper()
	r, err := call(context.Background(), c, method, p.url+path, body, hdr...)
	if err != nil {
		p.t.Fatalf("%s %s: %v\n%s", method, path, err, p.out)
	}
	return r
}

// healthy fails the test unless the process runs and GET /health answers 200.
func (p *proc) healthy(c *http.Client, after string) {
	p.t.Helper()
	if !p.alive() {
		p.t.Fatalf("after %s the emulator exited: %v\n%s", after, p.err, p.out)
	}
	r, err := call(context.Background(), c, "GET", p.url+"/health", "")
	if err != nil || r.status != 200 {
		p.t.Fatalf("after %s GET /health: %v %d %s\n%s", after, err, r.status, r.body, p.out)
	}
}

// raw writes head, then streams body (possibly very large) concurrently while
// reading the one response; it returns the status and body of the response.
func (p *proc) raw(head string, body io.Reader) (int, []byte, error) {
	u, _ := url.Parse(p.url)
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, nil, err
	}
	if body != nil {
		go func() { _, _ = io.Copy(conn, body) }()
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// hermesErr is the Hermes error envelope (runs-api §2), code null when "".
func hermesErr(msg, code string) string {
	c := "null"
	if code != "" {
		c = strconv.Quote(code)
	}
	m, _ := json.Marshal(msg)
	return `{"error":{"message":` + string(m) + `,"type":"invalid_request_error","param":null,"code":` + c + `}}`
}

// rawHalf writes head, closes the write side (a client that gives up part-way
// through its body) and reads whatever answer comes.
func (p *proc) rawHalf(head string) (int, []byte, error) {
	u, _ := url.Parse(p.url)
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, nil, err
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
