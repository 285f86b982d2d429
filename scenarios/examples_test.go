package scenarios

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamples loads and validates every file of examples/scenarios.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/scenarios/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("%d example files, want at least 5", len(files))
	}
	for _, f := range files {
		set, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if set.Len() == 0 {
			t.Errorf("%s: no scenarios", f)
		}
	}
	// A broken file names itself and the first bad field.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("scenarios:\n  - name: x\n    steps:\n      - {after: 1s, observe: {status: running, output: no}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || err.Error() != bad+": scenarios[0].steps[0].observe: result fields require completed status" {
		t.Fatalf("got %v", err)
	}
	if _, err := Load(bad + ".missing"); err == nil || err.Error() != bad+".missing: no such file" {
		t.Fatalf("got %v", err)
	}
	// A file that cannot be read says why once, after its name.
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || err.Error() != dir+": is a directory" {
		t.Fatalf("got %v", err)
	}
}
