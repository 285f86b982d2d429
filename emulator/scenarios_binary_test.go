package emulator_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The built binary with --scenarios, driven by clients that never call
// /__admin: curl (scripts/scenarios-demo) and plain net/http.
func TestScenarioBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := binBuild(t, t.TempDir())
	cmd := exec.Command(bin, "serve", "--port", "0", "--log", "off", "--scenarios", "../examples/scenarios/happy-path.yaml")
	cmd.Env = binEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("start-up line %q: %v", line, err)
	}
	url := m[1]

	// Plain net/http: submit, then poll until completed.
	status, body := binCall(t, "POST", url+"/v1/runs", `{"input":"hi"}`)
	id := regexp.MustCompile(`"run_id":"([^"]+)"`).FindStringSubmatch(body)
	if status != 202 || id == nil {
		t.Fatalf("submit: %d %s", status, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(body, `"status":"completed"`) {
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
		_, body = binCall(t, "GET", url+"/v1/runs/"+id[1], "")
	}
	if !strings.Contains(body, `"output":"Your project has 12 files."`) {
		t.Fatalf("record %s", body)
	}

	// The curl client of the README.
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	var out bytes.Buffer
	demo := exec.Command("sh", "../scripts/scenarios-demo", url)
	demo.Stdout, demo.Stderr = &out, &out
	if err := demo.Run(); err != nil {
		t.Fatalf("scripts/scenarios-demo: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{`data: {"event": "tool.started"`, `"event": "message.delta", "run_id": `, `"delta": "12 files."}`,
		`data: {"event": "run.completed"`, ": stream closed\n", "status completed\n"} {
		if !strings.Contains(got, want) {
			t.Fatalf("output lacks %q:\n%s", want, got)
		}
	}
}
