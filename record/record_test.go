package record

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// session drives four runs through the proxy while the test moves them with
// the upstream's control plane: an approval answered once with tool events
// and a delta (A), a steer then a stop (B), a denied approval (C), a
// message-list input completed with pending steer text (D). A replayed and a
// refused submission cross too. It returns the runs' ids.
func session(r *rig) []string {
	ms := time.Millisecond
	a := r.create(`{"input":"deploy to staging"}`)
	r.poll(a)
	sa := r.subscribe(a)
	r.advance(200 * ms)
	r.observe(a, `{"status":"running"}`)
	r.poll(a)
	r.advance(100 * ms)
	r.events(a, `{"event":"tool.started","tool":"terminal","preview":"make deploy"}`)
	sa.next()
	r.advance(50 * ms)
	r.observe(a, `{"status":"waiting_for_approval","approval":{"command":"make deploy","description":"deploy to staging"}}`)
	sa.next()
	r.poll(a)
	r.advance(400 * ms)
	if got := r.do("POST", "/v1/runs/"+a+"/approval", `{"choice":"once"}`); got.status != 200 {
		r.t.Fatalf("approval: %+v", got)
	}
	sa.next()
	r.advance(1500 * ms)
	r.events(a, `{"event":"tool.completed","tool":"terminal","duration":1.5}`, `{"event":"message.delta","delta":"Deployed \"staging\" ✓"}`)
	sa.next()
	sa.next()
	r.advance(500 * ms)
	r.observe(a, `{"status":"completed","output":"Deployed \"staging\" ✓","usage":{"input_tokens":12,"output_tokens":3,"total_tokens":15}}`)
	sa.next()
	sa.end()
	r.poll(a)

	b := r.create(`{"input":"long job","model":"hermes-agent"}`)
	if got := r.do("POST", "/v1/runs", `{"input":""}`); got.status != 400 {
		r.t.Fatalf("refused submission: %+v", got)
	}
	r.poll(b)
	sb := r.subscribe(b)
	r.advance(100 * ms)
	r.observe(b, `{"status":"running"}`)
	r.poll(b)
	r.advance(100 * ms)
	if got := r.do("POST", "/v1/runs/"+b+"/steer", `{"input":"also run the tests"}`); got.status != 200 {
		r.t.Fatalf("steer: %+v", got)
	}
	sb.next()
	r.advance(50 * ms)
	r.events(b, `{"event":"reasoning.available","text":"thinking"}`)
	sb.next()
	r.advance(100 * ms)
	if got := r.do("POST", "/v1/runs/"+b+"/stop", ""); got.body != `{"run_id":"`+b+`","status":"stopping"}` {
		r.t.Fatalf("stop: %+v", got)
	}
	r.poll(b)
	r.advance(250 * ms)
	r.observe(b, `{"status":"cancelled"}`)
	sb.next()
	sb.end()
	r.poll(b)

	c := r.create(`{"input":"rm -rf /tmp/*.log (sure?)","session_id":"ops-7"}`)
	r.poll(c)
	r.advance(10 * ms)
	r.observe(c, `{"status":"waiting_for_approval","approval":{"command":"rm -rf /tmp/*.log"}}`)
	r.poll(c)
	r.advance(20 * ms)
	if got := r.do("POST", "/v1/runs/"+c+"/approval", `{"choice":"deny"}`); got.status != 200 {
		r.t.Fatalf("deny: %+v", got)
	}
	r.poll(c)
	r.advance(30 * ms)
	r.observe(c, `{"status":"failed","error":"approval denied"}`)
	r.poll(c)

	d := r.create(`{"input":[{"role":"user","content":"summarise"}]}`)
	r.poll(d)
	r.advance(100 * ms)
	r.observe(d, `{"status":"running"}`)
	r.poll(d)
	if got := r.do("POST", "/v1/runs/"+d+"/steer", `{"text":"keep it short"}`); got.status != 200 {
		r.t.Fatalf("steer: %+v", got)
	}
	r.advance(200 * ms)
	r.observe(d, `{"status":"completed","output":"short"}`)
	r.poll(d)
	return []string{a, b, c, d}
}

// golden compares got with testdata/name (rewritten with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestRecordSession(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"session.yaml", Options{}},
		{"session-redacted.yaml", Options{Redact: true}},
		{"session-order-speed10.yaml", Options{Match: MatchOrder, Speed: 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.opts)
			r.do("GET", "/v1/capabilities", "")
			ids := session(r)
			for _, path := range []string{"/v1/runs/" + ids[0], "/v1/runs/" + ids[1], "/v1/runs/missing", "/v1/capabilities", "/v1/nope"} {
				direct, proxied := send(t, r.up.URL(), "GET", path, ""), send(t, r.px.URL, "GET", path, "")
				direct.header.Del("Date")
				proxied.header.Del("Date")
				if !reflect.DeepEqual(direct, proxied) {
					t.Errorf("GET %s: direct %+v, proxied %+v", path, direct, proxied)
				}
			}
			if got := r.do("POST", FlushPath, ""); got.status != 200 || got.body != `{"file":`+quoteJSON(r.out)+`,"scenarios":4}` {
				t.Fatalf("flush: %+v", got)
			}
			written, err := os.ReadFile(r.out)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, []byte(strings.Replace(string(written), r.up.URL(), "http://upstream.test", 1)))
			if c.opts.Redact {
				for _, text := range []string{"deploy", "staging", "Deployed", "thinking", "approval denied", "rm -rf", "short"} {
					if strings.Contains(string(written), text) {
						t.Errorf("redacted file holds %q", text)
					}
				}
			}
			if strings.Contains(string(written), "sk-never-stored") {
				t.Error("the token is in the file")
			}
			if dump := r.rec.dump(); strings.Contains(dump, "sk-never-stored") || strings.Contains(dump, "Authorization") {
				t.Errorf("the recorder holds a header: %s", dump)
			}
		})
	}
}

// dump renders everything the recorder holds about runs, for the
// no-credential check.
func (r *Recorder) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	b.WriteString(r.info)
	for _, l := range r.order {
		b.WriteString(l.runID + l.input + l.sessionID)
		for _, o := range l.obs {
			if o.body != nil {
				b.Write(runs.MarshalValue(runs.ObjectValue(o.body)))
			}
			b.WriteString(o.text)
		}
	}
	return b.String()
}

// Options that cannot be recorded with are refused with their exact error.
func TestNewRefusesOptions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.yaml")
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Upstream: "ftp://h", Out: out}, `record: --upstream must be an http(s) URL, not "ftp://h"`},
		{Options{Upstream: "http://h/?x=1", Out: out}, `record: --upstream must be a base URL without credentials, query or fragment, not "http://h/?x=1"`},
		{Options{Upstream: "http://h/api?", Out: out}, `record: --upstream must be a base URL without credentials, query or fragment, not "http://h/api?"`},
		{Options{Upstream: "http://h/#top", Out: out}, `record: --upstream must be a base URL without credentials, query or fragment, not "http://h/#top"`},
		{Options{Upstream: "http://u:p@h", Out: out}, `record: --upstream must be a base URL without credentials, query or fragment, not "http://u:xxxxx@h"`},
		{Options{Upstream: "http://u@h", Out: out}, `record: --upstream must be a base URL without credentials, query or fragment, not "http://u@h"`},
		{Options{Upstream: "http://h"}, "record: --out is required"},
		{Options{Upstream: "http://h", Out: out, Speed: -1}, "record: --speed must be from 0.001 to 1000000, not -1"},
		{Options{Upstream: "http://h", Out: out, Speed: 1e-12}, "record: --speed must be from 0.001 to 1000000, not 1e-12"},
		{Options{Upstream: "http://h", Out: out, Speed: math.NaN()}, "record: --speed must be from 0.001 to 1000000, not NaN"},
		{Options{Upstream: "http://h", Out: out, Speed: 2e6}, "record: --speed must be from 0.001 to 1000000, not 2e+06"},
	} {
		if _, err := New(c.opts); err == nil || err.Error() != c.want {
			t.Errorf("New(%+v) = %v, want %q", c.opts, err, c.want)
		}
	}
}

// --out naming a directory is refused by New: the file is written only at the
// end (a rename onto the directory fails), so the whole recording would be lost.
func TestNewRefusesDirectoryOut(t *testing.T) {
	dir := t.TempDir()
	for _, out := range []string{dir, dir + string(filepath.Separator)} {
		_, err := New(Options{Upstream: "http://127.0.0.1:1", Out: out})
		if want := "record: --out " + out + ": is a directory, not a file"; err == nil || err.Error() != want {
			t.Errorf("New(Out %q) = %v, want %q", out, err, want)
		}
	}
	if _, err := New(Options{Upstream: "http://127.0.0.1:1", Out: filepath.Join(dir, "o.yaml")}); err != nil {
		t.Fatal(err)
	}
}

// An --out the recorder could not write at a flush is refused by New, with
// the path and the operating system's reason, and the check leaves the
// directory as it was: no temporary file, no empty --out.
func TestNewRefusesUnwritableOut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, strings.Repeat("x", 251)+".yaml") // 256 bytes: over NAME_MAX
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ out, want string }{
		{filepath.Join(file, "o.yaml"), "record: --out " + filepath.Join(file, "o.yaml") + ": " + file + " is not a directory"},
		{filepath.Join(file, "d", "o.yaml"), "record: --out " + filepath.Join(file, "d", "o.yaml") + ": the directory " + filepath.Join(file, "d") + ": not a directory"},
		{long, "record: --out " + long + ": cannot create the file: file name too long"},
	}
	if os.Geteuid() != 0 { // root writes in a directory without write permission
		cases = append(cases, struct{ out, want string }{filepath.Join(locked, "o.yaml"),
			"record: --out " + filepath.Join(locked, "o.yaml") + ": cannot create a file in " + locked + ": permission denied"})
	}
	for _, c := range cases {
		if _, err := New(Options{Upstream: "http://127.0.0.1:1", Out: c.out}); err == nil || err.Error() != c.want {
			t.Errorf("New(Out %q)\n= %v\nwant %s", c.out, err, c.want)
		}
	}
	// Accepted: a new file (not created by the check) and an existing one (not touched).
	fresh := filepath.Join(dir, "new.yaml")
	for _, out := range []string{fresh, file} {
		if _, err := New(Options{Upstream: "http://127.0.0.1:1", Out: out}); err != nil {
			t.Fatalf("New(Out %q): %v", out, err)
		}
	}
	for _, d := range []string{dir, locked} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := map[string]string{dir: "file locked", locked: ""}[d]; strings.Join(names, " ") != want {
			t.Errorf("%s holds %q after the checks, want %q", d, names, want)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "kept" {
		t.Errorf("an existing --out was changed: %q", b)
	}
}

// A flush follows a symbolic --out to its target, keeps an existing file's
// mode and writes what is not a regular file in place: the rename used to
// replace the link itself (/dev/stdout, as root, became a file) and leave a
// 0600 file.
func TestWriteOutKeepsWhatOutIs(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept.yaml")
	if err := os.WriteFile(kept, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := writeOut(kept, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(kept); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode of a replaced file = %v, want 0640", fi.Mode().Perm())
	}
	fresh := filepath.Join(dir, "fresh.yaml")
	if err := writeOut(fresh, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode of a new file = %v, want 0644", fi.Mode().Perm())
	}
	for _, target := range []string{kept, os.DevNull} {
		link := filepath.Join(dir, "link.yaml")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if err := writeOut(link, []byte("via the link")); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link to %s was replaced by a file", target)
		}
	}
	if b, _ := os.ReadFile(kept); string(b) != "via the link" {
		t.Fatalf("the link's target holds %q", b)
	}
}
