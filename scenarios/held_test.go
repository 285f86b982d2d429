package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// heapHeld is how many heap bytes what f returns keeps alive (runtime.MemStats
// after a collection, before and after; f's garbage is collected).
func heapHeld(f func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(x)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// repeat joins n copies of el(i) with commas.
func repeat(n int, el func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = el(i)
	}
	return strings.Join(parts, ",")
}

// scenariosOf is a set of n scenarios named s0…, each with steps.
func scenariosOf(n int, match, steps string) string {
	return `{"scenarios":[` + repeat(n, func(i int) string {
		return fmt.Sprintf(`{"name":"s%d",%s"steps":[%s]}`, i, match, steps)
	}) + `]}`
}

// matchInput is a match object of one input pattern, as JSON.
func matchInput(p string) string { return `"match":{"input":` + quoteJSON(p) + `},` }

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// recording is a set shaped like a hermes-emulator record file: a scenario a
// run, matched by ^<regexp.QuoteMeta(prompt)>$, running, a tool call, deltas
// message.delta events of 8 bytes, completed with the output.
func recording(runs, promptBytes, deltas int) string {
	prompt := strings.Repeat("Deploy (the) app? ", promptBytes/18+1)[:promptBytes]
	return `{"scenarios":[` + repeat(runs, func(i int) string {
		p := "^" + regexp.QuoteMeta(fmt.Sprintf("%06d ", i)+prompt) + "$"
		return fmt.Sprintf(`{"name":"rec-%06d","match":{"input":%s},"steps":[`, i, quoteJSON(p)) +
			`{"after":"200ms","observe":{"status":"running"}},` +
			`{"after":"100ms","events":[{"event":"tool.started","tool":"terminal","preview":"make deploy"}]},` +
			`{"after":"1.5s","events":[{"event":"tool.completed","tool":"terminal","duration":1.5,"error":false},` +
			repeat(deltas, func(int) string { return `{"event":"message.delta","delta":"Deployed"}` }) + `]},` +
			`{"after":"500ms","observe":{"status":"completed","output":"` + strings.Repeat("Deployed", deltas) +
			`","usage":{"input_tokens":12,"output_tokens":3,"total_tokens":15}}}]}`
	}) + `]}`
}

// A set's weight is at least what it holds on the heap, measured for the
// shapes that hold the most per value, per step, per scenario, per byte of a
// string and per instruction of a regular expression (held.go): so the sets
// of all namespaces, at most MaxHeldBytes together, hold at most that. The
// log shows each shape's heap bytes, weight and heap bytes a weighed byte.
func TestWeightBoundsHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures heaps of tens of MB")
	}
	step := func(n int, s string) string { return repeat(n, func(int) string { return s }) }
	for _, c := range []struct{ name, body string }{
		{"numbers", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"x":[` + step(50_000, "0") + `]}}]}]}`},
		{"empty objects", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"x":[` + step(50_000, "{}") + `]}}]}]}`},
		{"arrays of 103 empty objects", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"x":[` + step(500, "["+step(103, "{}")+"]") + `]}}]}]}`},
		{"keys", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{` + repeat(50_000, func(i int) string { return fmt.Sprintf(`"k%d":0`, i) }) + `}}]}]}`},
		{"strings", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"command":"` + strings.Repeat("x", 5<<20) + `"}}]}]}`},
		{"approval steps", scenariosOf(25, "", step(600, `{"after":0,"approval":{}}`))},
		{"approval steps with a command", scenariosOf(25, "", step(600, `{"after":0,"approval":{"command":"x"}}`))},
		{"event steps", scenariosOf(25, "", step(600, `{"after":0,"events":[{"event":"message.delta","delta":"x"}]}`))},
		{"steer steps", scenariosOf(25, "", step(600, `{"after":0,"deliver_steers":true}`))},
		{"observe steps", scenariosOf(25, "", step(600, `{"after":0,"observe":{"status":"running"}}`))},
		{"scenarios", scenariosOf(1000, "", `{"after":0,"deliver_steers":true}`)},
		{"scenarios with a match", scenariosOf(1000, `"match":{"input":"a","model":"m","session_id":"^b$"},`, `{"after":0,"deliver_steers":true}`)},
		{"literal", scenariosOf(1, matchInput(strings.Repeat("abcdefgh", 1<<15)), `{"after":0,"deliver_steers":true}`)},
		{"anchored literal", scenariosOf(1, matchInput("^"+regexp.QuoteMeta(strings.Repeat("a.b c?d ", 1<<15))+"$"), `{"after":0,"deliver_steers":true}`)},
		{"case-folded literal", scenariosOf(1, matchInput("(?i)"+strings.Repeat("abcdefgh", 1<<15)), `{"after":0,"deliver_steers":true}`)},
		{"repeated literal", scenariosOf(1, matchInput(strings.Repeat("a{1000}", 250)), `{"after":0,"deliver_steers":true}`)},
		{"classes", scenariosOf(1, matchInput(strings.Repeat("[a-z]", 1<<15)), `{"after":0,"deliver_steers":true}`)},
		{"repeated class", scenariosOf(1, matchInput(strings.Repeat("[a-z]{1000}", 250)), `{"after":0,"deliver_steers":true}`)},
		{"unicode classes", scenariosOf(1, matchInput(strings.Repeat(`\pL`, 5000)), `{"after":0,"deliver_steers":true}`)},
		{"repeated unicode class", scenariosOf(1, matchInput(strings.Repeat(`\pL{1000}`, 250)), `{"after":0,"deliver_steers":true}`)},
		{"stars", scenariosOf(1, matchInput("^"+strings.Repeat("a*b", 1<<15)+"$"), `{"after":0,"deliver_steers":true}`)},
		{"alternations", scenariosOf(1, matchInput(strings.Repeat("(?:ab|cd)", 1<<14)), `{"after":0,"deliver_steers":true}`)},
		{"captures", scenariosOf(1, matchInput(strings.Repeat("(a)", 1<<14)), `{"after":0,"deliver_steers":true}`)},
		{"optional repeats", scenariosOf(1, matchInput(strings.Repeat("a{0,1000}", 250)), `{"after":0,"deliver_steers":true}`)},
		{"short anchored literals", scenariosOf(250, matchInput("^"+strings.Repeat("abcdefgh", 112)+"$"), `{"after":0,"deliver_steers":true}`)},
		{"short anchored classes", scenariosOf(250, matchInput("^"+strings.Repeat("[a-z]", 900)+"$"), `{"after":0,"deliver_steers":true}`)},
		{"short anchored stars", scenariosOf(250, matchInput("^"+strings.Repeat("a*b", 300)+"$"), `{"after":0,"deliver_steers":true}`)},
		{"short anchored unicode classes", scenariosOf(10, matchInput(`^\pL{900}$`), `{"after":0,"deliver_steers":true}`)},
		{"short anchored alternations", scenariosOf(250, matchInput("^"+strings.Repeat("(?:ab|cd)", 150)+"$"), `{"after":0,"deliver_steers":true}`)},
		{"literals of 255 bytes", scenariosOf(250, matchInput(strings.Repeat("abcdefgh", 32)[:255]), `{"after":0,"deliver_steers":true}`)},
		{"literals of 520 bytes", scenariosOf(250, matchInput(strings.Repeat("abcdefgh", 65)), `{"after":0,"deliver_steers":true}`)},
		{"anchored literals of 253 bytes", scenariosOf(250, matchInput("^"+strings.Repeat("abcdefgh", 32)[:253]+"$"), `{"after":0,"deliver_steers":true}`)},
		{"tiny anchored", scenariosOf(1000, `"match":{"input":"^a$","session_id":"^b$"},`, `{"after":0,"deliver_steers":true}`)},
		{"recording, 1 KB inputs", recording(250, 1000, 20)},
		{"recording, 900-byte inputs", recording(250, 900, 20)},
	} {
		var set *Set
		heap := heapHeld(func() any {
			var err error
			if set, err = Parse([]byte(c.body)); set == nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return set
		})
		t.Logf("%-30s %11d heap bytes, weight %11d: %.2f a weighed byte", c.name, heap, set.heldBytes, float64(heap)/float64(set.heldBytes))
		if heap > set.heldBytes {
			t.Errorf("%s: %d heap bytes, more than its weight %d", c.name, heap, set.heldBytes)
		}
	}
}

// The sets of all namespaces — the default once, every namespace's own —
// weigh at most MaxHeldBytes together: a Put past it is refused with a 409
// and changes nothing; a set replaced or deleted weighs no more.
func TestSetsHeldBound(t *testing.T) {
	const msg = "scenario sets too large in all namespaces (max 268435456 bytes)"
	quarter := &Set{heldBytes: MaxHeldBytes / 4}
	half := &Set{heldBytes: MaxHeldBytes / 2}
	s := Sets{Default: quarter}
	for i, c := range []struct {
		ns   string
		set  *Set
		fits bool
	}{
		{"a", half, true},    // default ¼ + ½
		{"b", half, false},   // + ½: past the bound
		{"b", quarter, true}, // + ¼: exactly the bound
		{"c", &Set{}, true},  // a set that weighs nothing fits
		{"c", nil, true},     // a deletion too
		{"a", quarter, true}, // replacing a: ½ → ¼
		{"c", quarter, true}, // ¼ + ¼ + ¼ + ¼
		{"d", &Set{heldBytes: 1}, false},
		{"a", nil, true}, // deleting a frees its ¼
		{"d", quarter, true},
		{"b", half, false}, // b's ¼ → ½: past the bound
	} {
		own := s.own[c.ns]
		_, had := s.own[c.ns]
		err := s.Put(c.ns, c.set, 10)
		switch {
		case c.fits && err != nil:
			t.Fatalf("%d: Put(%s) = %v", i, c.ns, err)
		case !c.fits && (err == nil || err.Status != 409 || err.Message != msg || err.Envelope != runs.EnvAdmin):
			t.Fatalf("%d: Put(%s) = %+v, want 409 %q", i, c.ns, err, msg)
		case !c.fits:
			if _, has := s.own[c.ns]; has != had || s.own[c.ns] != own {
				t.Fatalf("%d: a refused Put changed %s", i, c.ns)
			}
		}
		if total := s.Default.held() + s.held; total > MaxHeldBytes {
			t.Fatalf("%d: the sets weigh %d", i, total)
		}
	}
	if s.held != 3*MaxHeldBytes/4 {
		t.Fatalf("own sets weigh %d, want ¾ of the bound", s.held)
	}
}

// A set that alone weighs more than all namespaces may is refused as Put
// refuses one (Load names the file), once its weight passes the bound: its
// later regular expressions are not compiled — not even read, so the bad one
// after them goes unnamed.
func TestSetHeavierThanTheBound(t *testing.T) {
	const msg = "scenario sets too large in all namespaces (max 268435456 bytes)"
	// \pL 10,000 times: 10,000 classes of ~1,300 characters, 55 MB of weight.
	heavy := matchInput(strings.Repeat(`\pL`, 10000))
	body := `{"scenarios":[` + repeat(5, func(i int) string {
		return fmt.Sprintf(`{"name":"s%d",%s"steps":[{"after":0,"deliver_steers":true}]}`, i, heavy)
	}) + `,{"name":"bad","match":{"input":"("},"steps":[{"after":0,"deliver_steers":true}]}]}`
	set, err := Parse([]byte(body))
	if set != nil || err == nil || err.Status != 409 || err.Message != msg || err.Envelope != runs.EnvAdmin {
		t.Fatalf("Parse: %v", err)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || err.Error() != path+": "+msg {
		t.Fatalf("Load: %v", err)
	}
}
