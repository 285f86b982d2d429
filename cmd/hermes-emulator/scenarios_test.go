package main

import (
	"os"
	"path/filepath"
	"testing"
)

// An invalid --scenarios file stops serve before it listens: exit 2 and one
// line naming the file and the first bad field by path.
func TestServeBadScenarios(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("scenarios:\n  - name: x\n    steps:\n      - {after: 0s, observe: {status: running}}\n      - {after: 0s, observe: {status: running}}\n      - {after: 1s, observe: {status: running, output: no}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{bad, "hermes-emulator serve: " + bad + ": scenarios[0].steps[2].observe: result fields require completed status\n"},
		{filepath.Join(dir, "none.yaml"), "hermes-emulator serve: " + filepath.Join(dir, "none.yaml") + ": no such file\n"},
	} {
		cliClean(t)
		code, stdout, stderr := cliRun("serve", "--scenarios", c.file)
		if code != 2 || stderr != c.want || stdout != "" {
			t.Fatalf("exit %d stdout %q stderr %q, want 2 and %q", code, stdout, stderr, c.want)
		}
	}
	// A valid one gets past the check (and fails later at the unbindable host
	// cliClean sets, with exit 1).
	cliClean(t)
	if code, _, stderr := cliRun("serve", "--log", "off", "--scenarios", "../../examples/scenarios/approval.yaml"); code != 1 {
		t.Fatalf("exit %d %q", code, stderr)
	}
}
