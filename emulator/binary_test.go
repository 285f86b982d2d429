package emulator_test

// Acceptance items 196–197: the built hermes-emulator binary, driven by an
// independent HTTP client (runs-api §15). The binary is built once per test run.

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binBuild builds ./cmd/hermes-emulator into dir and returns the binary's path.
func binBuild(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "hermes-emulator")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hermes-emulator")
	cmd.Dir = ".." // the module root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// binEnv is the environment without HERMES_EMULATOR_* and MOCKINGBIRD_ADMIN_KEY,
// so the flags' defaults apply.
func binEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERMES_EMULATOR_") && !strings.HasPrefix(kv, "MOCKINGBIRD_ADMIN_KEY=") {
			env = append(env, kv)
		}
	}
	return env
}

// binRun runs the binary to completion and returns its exit code and output.
func binRun(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = binEnv()
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), o.String(), e.String()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return 0, o.String(), e.String()
}

// binCall sends one request with a plain client and returns status and body.
func binCall(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// acceptance 196 and 197
func TestO196O197Binary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := binBuild(t, t.TempDir())

	// acceptance 196
	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{"--help"}, {}, {"-h"}} {
			code, out, errOut := binRun(t, bin, args...)
			if code != 0 || errOut != "" || !strings.Contains(out, "hermes-emulator") || !strings.Contains(out, "serve") {
				t.Errorf("%v: exit %d, stderr %q, stdout %q", args, code, errOut, out)
			}
		}
		code, out, errOut := binRun(t, bin, "bogus")
		if code != 2 || strings.TrimSpace(errOut) == "" {
			t.Errorf("bogus: exit %d, stderr %q, stdout %q", code, errOut, out)
		}
	})

	// acceptance 197
	t.Run("serve", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--port", "0")
		cmd.Env = binEnv()
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		t.Cleanup(func() {
			select {
			case <-exited:
			default:
				_ = cmd.Process.Kill()
				<-exited
			}
		})
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
			exited <- cmd.Wait()
		}()
		var got []string
		timeout := time.After(20 * time.Second)
		for len(got) < 3 {
			select {
			case l, ok := <-lines:
				if !ok {
					err := <-exited
					exited <- err
					t.Fatalf("stdout closed after %q: %v; stderr %s", got, err, errOut.String())
				}
				got = append(got, l)
			case <-timeout:
				t.Fatalf("no start-up lines after 20s: %q", got)
			}
		}
		m := regexp.MustCompile(`^hermes-emulator listening on (http://127\.0\.0\.1:([0-9]+))$`).FindStringSubmatch(got[0])
		if m == nil || m[2] == "0" {
			t.Fatalf("first line %q", got[0])
		}
		url := m[1]
		if got[1] != "hermes-emulator health: GET "+url+"/health" ||
			got[2] != "hermes-emulator admin: "+url+"/__admin (open — pass --admin-key to lock)" {
			t.Errorf("start-up lines %q", got)
		}

		checks := []struct {
			method, path, body string
			status             int
			want               string
		}{
			{"GET", "/v1/runs/example", "", 404, `{"error":{"message":"Run not found: example","type":"invalid_request_error","param":null,"code":"run_not_found"}}`},
			{"GET", "/health", "", 200, ""},
			{"POST", "/v1/runs", `{"input":"synthetic"}`, 202, `{"run_id":"run_4e685a726271445348426a4a70783364","status":"started","replayed":false}`},
			{"GET", "/v1/runs/run_4e685a726271445348426a4a70783364", "", 200, ""},
			{"POST", "/v1/runs/example/stop", "", 404, `{"error":{"message":"Run not found: example","type":"invalid_request_error","param":null,"code":"run_not_found"}}`},
		}
		for _, c := range checks {
			status, body := binCall(t, c.method, url+c.path, c.body)
			if status != c.status || (c.want != "" && body != c.want) {
				t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, status, body, c.status, c.want)
			}
			if c.path == "/v1/runs/run_4e685a726271445348426a4a70783364" && !strings.Contains(body, `"status":"queued"`) {
				t.Errorf("poll: %s", body)
			}
			if c.path == "/health" && !strings.HasPrefix(body, `{"status":"ok","service":"hermes",`) {
				t.Errorf("health: %s", body)
			}
		}

		// SIGINT shuts the process down.
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			exited <- err // let Cleanup see that it has exited
			if err != nil {
				t.Errorf("exit after SIGINT: %v; stderr %s", err, errOut.String())
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("still running 15s after SIGINT")
		}
	})
}
