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

// The most heap bytes a JSON value of a set, and a unit of its compiled
// regular expressions' size, were measured to hold (TestHeldCosts; strings' and
// keys' own bytes aside): docs/security.md states the ceiling they give,
// MaxHeldValues × worstValueBytes + MaxHeldRegexpSize × worstUnitBytes.
const (
	worstValueBytes = 300
	worstUnitBytes  = 200
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

// repeat joins n copies of s with commas.
func repeat(n int, s string) string { return strings.TrimSuffix(strings.Repeat(s+",", n), ",") }

// scenariosOf is a set of n scenarios named s0…, each with match and steps.
func scenariosOf(n int, match, steps string) string {
	list := make([]string, n)
	for i := range list {
		list[i] = fmt.Sprintf(`{"name":"s%d",%s"steps":[%s]}`, i, match, steps)
	}
	return `{"scenarios":[` + strings.Join(list, ",") + `]}`
}

// matchInput is a match object of one input pattern, as JSON.
func matchInput(p string) string {
	return `"match":{"input":"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p) + `"},`
}

// What a regular expression's size counts: its program's instructions and the
// runes they list.
func TestRegexpSize(t *testing.T) {
	for expr, want := range map[string]int{
		"":                                  3,    // fail, nop, match
		"a":                                 4,    // fail, rune1 a (an instruction and its rune), match
		"^a$":                               6,    // + two empty-width instructions
		"[a-z]":                             5,    // one instruction, the range's two ends
		"a{1000}":                           2002, // a thousand instructions and runes
		"^" + regexp.QuoteMeta("a.b") + "$": 10,
		`\pL`:                               1321, // one instruction listing 1,318 runes (659 ranges)
	} {
		if got := regexpSize(expr); got != want {
			t.Errorf("regexpSize(%q) = %d, want %d", expr, got, want)
		}
	}
}

// The heap a set holds, a JSON value and a unit of regular-expression size at
// a time, is at most worstValueBytes and worstUnitBytes, measured with
// runtime.MemStats on the shapes that hold the most of each (the log shows
// them). Values: sets without regular expressions and with short strings;
// units: regexp.Compile's result, as a set keeps it.
func TestHeldCosts(t *testing.T) {
	if testing.Short() {
		t.Skip("measures heaps of tens of MB")
	}
	deny := `{"after":0,"deliver_steers":true}`
	for _, c := range []struct{ name, body string }{
		{"numbers", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"x":[` + repeat(100_000, "0") + `]}}]}]}`},
		{"empty objects", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"x":[` + repeat(100_000, "{}") + `]}}]}]}`},
		{"arrays of 103 empty objects", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"x":[` + repeat(1000, "["+repeat(103, "{}")+"]") + `]}}]}]}`},
		{"objects of one key", `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"x":[` + repeat(100_000, `{"":0}`) + `]}}]}]}`},
		{"approval steps", scenariosOf(50, "", repeat(1000, `{"after":0,"approval":{}}`))},
		{"steer steps", scenariosOf(50, "", repeat(1000, deny))},
		{"event steps", scenariosOf(50, "", repeat(1000, `{"after":0,"events":[{"event":"message.delta","delta":"x"}]}`))},
		{"observe steps", scenariosOf(50, "", repeat(1000, `{"after":0,"observe":{"status":"running"}}`))},
		{"scenarios of one step", scenariosOf(1000, "", deny)},
	} {
		var set *Set
		heap := heapHeld(func() any {
			var err *runs.Error
			if set, err = Parse([]byte(c.body)); set == nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return set
		})
		per := float64(heap) / float64(set.values)
		t.Logf("%-28s %8d values %11d heap bytes: %5.1f a value", c.name, set.values, heap, per)
		if per > worstValueBytes {
			t.Errorf("%s: %.1f heap bytes a value, more than %d", c.name, per, worstValueBytes)
		}
	}
	for _, c := range []struct {
		name, expr string
		n          int // compiled n times
	}{
		{"^a$", "^a$", 20_000},
		{"^$", "^$", 20_000},
		{"empty", "", 20_000},
		{"recorded input, 900 bytes", "^" + regexp.QuoteMeta(strings.Repeat("a.b c?d ", 113)[:900]) + "$", 200},
		{"recorded input, 128 KiB", "^" + regexp.QuoteMeta(strings.Repeat("a.b c?d ", 1<<14)) + "$", 1},
		{"[a-z] 900 times, anchored", "^" + strings.Repeat("[a-z]", 900) + "$", 200},
		{"[a-z] 16,384 times", strings.Repeat("[a-z]", 1<<14), 1},
		{`\pL 900 times, anchored`, `^\pL{900}$`, 5},
		{`\pL 1,000 times`, strings.Repeat(`\pL`, 1000), 1},
		{"a{1000}, anchored", "^a{900}$", 200},
		{"a{1000} 100 times", strings.Repeat("a{1000}", 100), 1},
		{"a*b 300 times, anchored", "^" + strings.Repeat("a*b", 300) + "$", 200},
		{"(?:ab|cd) 150 times, anchored", "^" + strings.Repeat("(?:ab|cd)", 150) + "$", 200},
		{"(a) 16,384 times", strings.Repeat("(a)", 1<<14), 1},
	} {
		heap := heapHeld(func() any {
			res := make([]*regexp.Regexp, c.n)
			for i := range res {
				res[i] = regexp.MustCompile(c.expr)
			}
			return res
		})
		units := regexpSize(c.expr) * c.n
		per := float64(heap) / float64(units)
		t.Logf("%-30s %9d units %11d heap bytes: %5.1f a unit", c.name, units, heap, per)
		if per > worstUnitBytes {
			t.Errorf("%s: %.1f heap bytes a unit, more than %d", c.name, per, worstUnitBytes)
		}
	}
}

// The sets of all namespaces — the default once, every namespace's own — hold
// at most MaxHeldValues values and MaxHeldRegexpSize of regular expressions
// together: a Put past either is refused with its 409 and changes nothing; a
// set replaced or deleted counts no more.
func TestSetsHeldBound(t *testing.T) {
	const (
		values = "scenario sets hold more than 1000000 values in all namespaces"
		sizes  = "scenario sets' regular expressions compile to more than 1000000 instructions in all namespaces"
	)
	const q = MaxHeldValues / 4
	quarter := &Set{values: q, regexpSize: q}
	half := &Set{values: 2 * q, regexpSize: 2 * q}
	halfValues := &Set{values: 2 * q}
	halfSize := &Set{regexpSize: 2 * q}
	s := Sets{Default: quarter}
	for i, c := range []struct {
		ns   string
		set  *Set
		want string
	}{
		{"a", half, ""},           // default ¼ + ½
		{"b", half, values},       // + ½: past both, values first
		{"b", halfSize, sizes},    // past the size only
		{"b", halfValues, values}, // past the values only
		{"b", quarter, ""},        // + ¼: exactly both bounds
		{"c", &Set{}, ""},         // a set that counts nothing fits
		{"c", nil, ""},            // a deletion too
		{"a", quarter, ""},        // replacing a: ½ → ¼
		{"c", quarter, ""},        // ¼ + ¼ + ¼ + ¼
		{"d", &Set{values: 1}, values},
		{"d", &Set{regexpSize: 1}, sizes},
		{"a", nil, ""}, // deleting a frees its ¼
		{"d", quarter, ""},
		{"b", half, values}, // b's ¼ → ½
		{"b", &Set{values: q, regexpSize: 2 * q}, sizes},
	} {
		own, had := s.own[c.ns]
		err := s.Put(c.ns, c.set, 10)
		switch {
		case c.want == "" && err != nil:
			t.Fatalf("%d: Put(%s) = %v", i, c.ns, err)
		case c.want != "" && (err == nil || err.Status != 409 || err.Message != c.want || err.Envelope != runs.EnvAdmin):
			t.Fatalf("%d: Put(%s) = %+v, want 409 %q", i, c.ns, err, c.want)
		case c.want != "":
			if now, has := s.own[c.ns]; has != had || now != own {
				t.Fatalf("%d: a refused Put changed %s", i, c.ns)
			}
		}
		if v, n := s.Default.held(); v+s.values > MaxHeldValues || n+s.regexpSize > MaxHeldRegexpSize {
			t.Fatalf("%d: the sets hold %d values, %d of regular expressions", i, v+s.values, n+s.regexpSize)
		}
	}
	if s.values != 3*q || s.regexpSize != 3*q {
		t.Fatalf("own sets hold %d values, %d of regular expressions; want ¾ of the bounds", s.values, s.regexpSize)
	}
}

// A set counts its values and its regular expressions' sizes.
func TestSetCounts(t *testing.T) {
	set, err := Parse([]byte(`{"scenarios":[{"name":"a","match":{"input":"^a$","session_id":"[a-z]","model":"m"},"steps":[{"after":0,"deliver_steers":true}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// root, list, scenario, name, match, input, session_id, model, steps, step, after, true
	if v, n := set.held(); v != 12 || n != 6+5 {
		t.Fatalf("held() = %d values, %d of regular expressions; want 12, 11", v, n)
	}
}

// A set whose regular expressions alone compile past MaxHeldRegexpSize is
// refused as Put refuses one (Load names the file), as soon as they do: its
// later regular expressions are not compiled — not even read, so the bad one
// after them goes unnamed.
func TestSetRegexpsPastTheBound(t *testing.T) {
	const msg = "scenario sets' regular expressions compile to more than 1000000 instructions in all namespaces"
	// a{1000} 100 times: 200,002 a scenario, past the bound at the fifth.
	body := strings.TrimSuffix(scenariosOf(5, matchInput(strings.Repeat("a{1000}", 100)), `{"after":0,"deliver_steers":true}`), "]}") +
		`,{"name":"bad","match":{"input":"("},"steps":[{"after":0,"deliver_steers":true}]}]}`
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
	// Four of them fit.
	if _, err := Parse([]byte(scenariosOf(4, matchInput(strings.Repeat("a{1000}", 100)), `{"after":0,"deliver_steers":true}`))); err != nil {
		t.Fatalf("four: %v", err)
	}
}
