package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// lockedBuffer is a bytes.Buffer safe to read while the command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRecordBadFlags(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--out", "x.yaml"}, "hermes-emulator record: --upstream must be an http(s) URL, not \"\"\n"},
		{[]string{"--upstream", "http://127.0.0.1:1"}, "hermes-emulator record: --out is required\n"},
		{[]string{"--upstream", "http://h", "--out", "no-such-dir/x.yaml"}, "hermes-emulator record: --out no-such-dir/x.yaml: the directory no-such-dir does not exist\n"},
		{[]string{"--upstream", "http://h", "--out", "x", "--match", "fifo"}, "hermes-emulator record: --match must be input or order, not \"fifo\"\n"},
		{[]string{"--upstream", "http://h", "--out", "x", "--speed", "0"}, "hermes-emulator record: --speed must be from 0.001 to 1000000, not 0\n"},
		{[]string{"--upstream", "http://h", "--out", "x", "--speed", "1e-300"}, "hermes-emulator record: --speed must be from 0.001 to 1000000, not 1e-300\n"},
		{[]string{"--upstream", "http://h", "--out", "x", "--speed", "2e6"}, "hermes-emulator record: --speed must be from 0.001 to 1000000, not 2e+06\n"},
		{[]string{"--upstream", "http://h", "--out", "x", "--port", "70000"}, "hermes-emulator record: --port must be a port number from 0 to 65535, not 70000\n"},
		{[]string{"--upstream", "http://h", "--out", "x", "now"}, "hermes-emulator record: unexpected argument \"now\"\n"},
	} {
		code, _, stderr := cliRun(append([]string{"record"}, c.args...)...)
		if code != 2 || stderr != c.stderr {
			t.Errorf("%v: exit %d stderr %q, want 2 %q", c.args, code, stderr, c.stderr)
		}
	}
}

// The command proxies until a signal, then writes the file.
func TestRecordCommand(t *testing.T) {
	up := emulatortest.New(t, emulator.Options{})
	out := filepath.Join(t.TempDir(), "rec.yaml")
	var stdout, stderr lockedBuffer
	stop := make(chan os.Signal, 1)
	done := make(chan int)
	go func() {
		done <- recordUntil([]string{"--upstream", up.URL(), "--out", out, "--port", "0"}, &stdout, &stderr, stop)
	}()
	var base string
	for deadline := time.Now().Add(5 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if line, ok := strings.CutPrefix(stdout.String(), "hermes-emulator record: proxying "); ok {
			base, _, _ = strings.Cut(line, " ")
		}
	}
	if base == "" {
		t.Fatalf("no listen line: %q %q", stdout.String(), stderr.String())
	}
	resp, err := http.Post(base+"/v1/runs", "application/json", strings.NewReader(`{"input":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	stop <- syscall.SIGTERM
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.HasSuffix(stdout.String(), "hermes-emulator record: wrote 1 scenario(s) to "+out+"\n") {
		t.Errorf("stdout %q", stdout.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if set, err := scenarios.Load(out); err != nil || len(set.Scenarios) != 1 {
		t.Errorf("the written file does not load: %v", err)
	}
	if !strings.Contains(string(data), "# Upstream: platform hermes-agent, hermes@"+emulator.Version+".\n") ||
		!strings.Contains(string(data), `match: {"input": "^hello$"}`) {
		t.Errorf("file:\n%s", data)
	}
}

// An --out the recorder could not write is a usage error found before it
// listens (exit 2, one line naming the path and the reason), not at the
// flush that ends the recording; nothing is left in the directory.
func TestRecordUnwritableOut(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, strings.Repeat("r", 251)+".yaml") // 256 bytes: over NAME_MAX
	var stdout, stderr lockedBuffer
	stop := make(chan os.Signal, 1)
	stop <- syscall.SIGTERM // were it to listen, it would stop and flush at once
	code := recordUntil([]string{"--upstream", "http://127.0.0.1:1", "--out", out, "--port", "0"}, &stdout, &stderr, stop)
	want := "hermes-emulator record: --out " + out + ": cannot create the file: file name too long\n"
	if code != 2 || stderr.String() != want || stdout.String() != "" {
		t.Errorf("exit %d\nstdout %q\nstderr %q\nwant 2, no stdout, %q", code, stdout.String(), stderr.String(), want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// An IPv6 --host in brackets listens, as serve's does: "[::1]" failed with
// "address [[::1]]:8828: missing port in address" (exit 1).
func TestRecordBracketedIPv6Host(t *testing.T) {
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	var stdout, stderr lockedBuffer
	stop := make(chan os.Signal, 1)
	stop <- syscall.SIGTERM // stop, and flush, as soon as it listens
	out := filepath.Join(t.TempDir(), "rec.yaml")
	code := recordUntil([]string{"--upstream", "http://127.0.0.1:1", "--out", out, "--host", "[::1]", "--port", "0"}, &stdout, &stderr, stop)
	if code != 0 || !strings.HasPrefix(stdout.String(), "hermes-emulator record: proxying http://[::1]:") {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
}
