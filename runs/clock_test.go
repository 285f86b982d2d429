package runs

import (
	"math"
	"testing"
)

// object builds an object Value from key, value pairs in order.
func clockObj(kv ...any) Value {
	o := &Obj{}
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1].(Value))
	}
	return ObjectValue(o)
}

const frozenBase = 1700000000000.0 // the frozen base of acceptance.md

func TestClockNow(t *testing.T) {
	tests := []struct {
		c    Clock
		wall float64
		want float64
	}{
		{Clock{}, 1234, 1234},
		{Clock{OffsetMs: -34}, 1234, 1200},
		{Clock{OffsetMs: 0.5}, 1234, 1234.5},
		{Clock{Frozen: true, FrozenMs: frozenBase, OffsetMs: 99}, 1234, frozenBase},
		// A live clock set at the edge of the range stands still there as
		// the wall clock moves on (hardening H6).
		{Clock{OffsetMs: 8.64e15 - 1234}, 1234, 8.64e15},
		{Clock{OffsetMs: 8.64e15 - 1234}, 5234, 8.64e15},
		{Clock{OffsetMs: -8.64e15 - 1234}, 1000, -8.64e15},
	}
	for _, tt := range tests {
		if got := tt.c.Now(tt.wall); got != tt.want {
			t.Errorf("%+v.Now(%v) = %v, want %v", tt.c, tt.wall, got, tt.want)
		}
	}
}

func TestClockApplyRequest(t *testing.T) {
	const wall = 5000.0
	frozen := Clock{Frozen: true, FrozenMs: frozenBase, OffsetMs: 7}
	live := Clock{OffsetMs: 100}
	tests := []struct {
		name  string
		start Clock
		body  Value
		want  Clock
		err   string // "" for success
	}{
		// acceptance 179
		{"frozen frozenBase from live", Clock{}, clockObj("set", IntValue(1700000000000), "freeze", BoolValue(true)),
			Clock{Frozen: true, FrozenMs: frozenBase, OffsetMs: frozenBase - wall}, ""},
		{"advance 90s frozen", frozen, clockObj("advance", StringValue("90s")),
			Clock{Frozen: true, FrozenMs: 1700000090000, OffsetMs: 7}, ""},
		{"advance bad", frozen, clockObj("advance", StringValue("bad")), frozen, `advance: expected ms or "15m"-style`},
		{"set nope", frozen, clockObj("set", StringValue("nope")), frozen, "set: expected epoch ms or ISO-8601"},
		{"array body", frozen, ArrayValue(), frozen, "expected a JSON object"},
		{"null body", live, NullValue(), live, "expected a JSON object"},
		{"string body", live, StringValue("{}"), live, "expected a JSON object"},
		{"empty object", live, clockObj(), live, ""},
		{"unknown keys", live, clockObj("now", IntValue(1), "offsetMs", IntValue(2)), live, ""},

		// set
		{"set live adjusts offset", live, clockObj("set", IntValue(1700000000000)), Clock{OffsetMs: frozenBase - wall}, ""},
		{"set frozen moves instant", frozen, clockObj("set", FloatValue(12.5)), Clock{Frozen: true, FrozenMs: 12.5, OffsetMs: 7}, ""},
		{"set ISO", frozen, clockObj("set", StringValue("2023-11-14T22:13:20Z")), Clock{Frozen: true, FrozenMs: frozenBase, OffsetMs: 7}, ""},
		{"set negative", frozen, clockObj("set", IntValue(-1)), Clock{Frozen: true, FrozenMs: -1, OffsetMs: 7}, ""},
		{"set null", frozen, clockObj("set", NullValue()), frozen, "set: expected epoch ms or ISO-8601"},
		{"set true", frozen, clockObj("set", BoolValue(true)), frozen, "set: expected epoch ms or ISO-8601"},
		{"set object", frozen, clockObj("set", clockObj()), frozen, "set: expected epoch ms or ISO-8601"},
		{"set infinite float", frozen, clockObj("set", FloatValue(math.Inf(1))), frozen, "set: expected epoch ms or ISO-8601"},
		{"set int beyond binary64", frozen, clockObj("set", Value{Kind: Int, Int: "1" + repeatByte('0', 400)}), frozen, "set: expected epoch ms or ISO-8601"},
		{"set duration string", frozen, clockObj("set", StringValue("15m")), frozen, "set: expected epoch ms or ISO-8601"},

		// advance
		{"advance live adds to offset", live, clockObj("advance", IntValue(86400001)), Clock{OffsetMs: 86400101}, ""},
		{"advance negative fraction", frozen, clockObj("advance", FloatValue(-1.5)), Clock{Frozen: true, FrozenMs: frozenBase - 1.5, OffsetMs: 7}, ""},
		{"advance -1.5s", frozen, clockObj("advance", StringValue(" -1.5s ")), Clock{Frozen: true, FrozenMs: frozenBase - 1500, OffsetMs: 7}, ""},
		{"advance null", frozen, clockObj("advance", NullValue()), frozen, `advance: expected ms or "15m"-style`},
		{"advance array", frozen, clockObj("advance", ArrayValue(IntValue(1))), frozen, `advance: expected ms or "15m"-style`},

		// reset and freeze; other values ignored
		{"reset", frozen, clockObj("reset", BoolValue(true)), Clock{}, ""},
		{"reset false ignored", frozen, clockObj("reset", BoolValue(false)), frozen, ""},
		{"reset 1 ignored", frozen, clockObj("reset", IntValue(1)), frozen, ""},
		{"reset string ignored", frozen, clockObj("reset", StringValue("true")), frozen, ""},
		{"freeze live", live, clockObj("freeze", BoolValue(true)), Clock{Frozen: true, FrozenMs: wall + 100, OffsetMs: 100}, ""},
		{"freeze frozen keeps instant", frozen, clockObj("freeze", BoolValue(true)), frozen, ""},
		{"unfreeze recomputes offset", frozen, clockObj("freeze", BoolValue(false)), Clock{FrozenMs: frozenBase, OffsetMs: frozenBase - wall}, ""},
		{"unfreeze live is a no-op", live, clockObj("freeze", BoolValue(false)), live, ""},
		{"freeze null ignored", live, clockObj("freeze", NullValue()), live, ""},
		{"freeze 1 ignored", live, clockObj("freeze", IntValue(1)), live, ""},

		// the spec's order, whatever the key order
		{"freeze before set in body", live, clockObj("freeze", BoolValue(true), "set", IntValue(1700000000000)),
			Clock{Frozen: true, FrozenMs: frozenBase, OffsetMs: frozenBase - wall}, ""},
		{"advance before set in body", frozen, clockObj("advance", StringValue("1s"), "set", IntValue(0)),
			Clock{Frozen: true, FrozenMs: 1000, OffsetMs: 7}, ""},
		{"reset then set", frozen, clockObj("set", IntValue(1700000000000), "reset", BoolValue(true)), Clock{OffsetMs: frozenBase - wall}, ""},
		{"all four", frozen, clockObj("freeze", BoolValue(true), "advance", StringValue("2h"), "set", IntValue(0), "reset", BoolValue(true)),
			Clock{Frozen: true, FrozenMs: 7200000, OffsetMs: 7200000 - wall}, ""},

		// partial application: fields before the error stay applied
		{"reset kept when set fails", frozen, clockObj("reset", BoolValue(true), "set", StringValue("nope")), Clock{}, "set: expected epoch ms or ISO-8601"},
		{"set kept when advance fails", frozen, clockObj("set", IntValue(0), "advance", StringValue("bad"), "freeze", BoolValue(false)),
			Clock{Frozen: true, FrozenMs: 0, OffsetMs: 7}, `advance: expected ms or "15m"-style`},
		{"freeze not applied after error", live, clockObj("freeze", BoolValue(true), "advance", StringValue("1 week")), live, `advance: expected ms or "15m"-style`},
		{"advance not applied after set error", frozen, clockObj("advance", IntValue(1), "set", StringValue("")), frozen, "set: expected epoch ms or ISO-8601"},

		// range (hardening H6): within ±8.64e15 ms, else nothing of the request applies
		{"set at the limit", frozen, clockObj("set", FloatValue(8.64e15)), Clock{Frozen: true, FrozenMs: 8.64e15, OffsetMs: 7}, ""},
		{"set at the negative limit", frozen, clockObj("set", FloatValue(-8.64e15)), Clock{Frozen: true, FrozenMs: -8.64e15, OffsetMs: 7}, ""},
		{"set 1e308", frozen, clockObj("set", FloatValue(1e308)), frozen, "set: out of range (the clock stays within ±8.64e15 ms)"},
		{"set past the limit, live", live, clockObj("set", FloatValue(8.64e15+1)), live, "set: out of range (the clock stays within ±8.64e15 ms)"},
		{"set -1e308 after reset", frozen, clockObj("reset", BoolValue(true), "set", FloatValue(-1e308)), frozen, "set: out of range (the clock stays within ±8.64e15 ms)"},
		{"advance 1e308", frozen, clockObj("advance", FloatValue(1e308)), frozen, "advance: out of range (the clock stays within ±8.64e15 ms)"},
		{"set 1e308 then advance 1e308", live, clockObj("set", FloatValue(1e308), "advance", FloatValue(1e308)), live, "set: out of range (the clock stays within ±8.64e15 ms)"},
		{"set then advance past the limit", frozen, clockObj("set", FloatValue(8.6e15), "advance", FloatValue(1e14)), frozen, "advance: out of range (the clock stays within ±8.64e15 ms)"},
		{"advance live past the limit", live, clockObj("advance", FloatValue(-8.65e15)), live, "advance: out of range (the clock stays within ±8.64e15 ms)"},
		{"advance to the limit", Clock{Frozen: true}, clockObj("advance", FloatValue(8.64e15)), Clock{Frozen: true, FrozenMs: 8.64e15}, ""},
	}
	for _, tt := range tests {
		got, _, err := tt.start.ApplyRequest(tt.body, wall)
		if got != tt.want {
			t.Errorf("%s: clock = %+v, want %+v", tt.name, got, tt.want)
		}
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: unexpected error %q", tt.name, err.Message)
		case tt.err != "" && err == nil:
			t.Errorf("%s: no error, want %q", tt.name, tt.err)
		case tt.err != "" && (err.Message != tt.err || err.Status != 400 || err.Envelope != EnvAdmin):
			t.Errorf("%s: error %d/%d %q, want 400 admin %q", tt.name, err.Status, err.Envelope, err.Message, tt.err)
		}
	}
}

// moved: the request reset, set or advanced the clock (the autopilot fires a
// frozen clock's due steps only then, scenarios §2). A refused field,
// and every field after it, moves nothing; other values of reset do not reset.
func TestClockApplyRequestMoved(t *testing.T) {
	frozen := Clock{Frozen: true, FrozenMs: frozenBase}
	for _, tt := range []struct {
		body  string
		moved bool
	}{
		{`{"advance":0}`, true},
		{`{"advance":"90s"}`, true},
		{`{"set":1700000000000}`, true},
		{`{"reset":true}`, true},
		{`{"reset":true,"set":"nope"}`, true},
		{`{"set":1700000005000,"advance":"bad"}`, true},
		{`{}`, false},
		{`{"freeze":true}`, false},
		{`{"freeze":false}`, false},
		{`{"reset":false}`, false},
		{`{"reset":"yes"}`, false},
		{`{"advance":"bad"}`, false},
		{`{"set":"nope"}`, false},
		{`{"set":"nope","advance":1000}`, false},
		{`{"advance":1e308}`, false},
		{`{"set":1700000005000,"advance":1e308}`, false},
		{`{"reset":true,"set":1e308}`, false},
		{`[]`, false},
	} {
		if _, moved, _ := frozen.ApplyRequest(mustParse(t, tt.body), 5000); moved != tt.moved {
			t.Errorf("%s: moved %v, want %v", tt.body, moved, tt.moved)
		}
	}
}

func repeatByte(b byte, n int) string {
	s := make([]byte, n)
	for i := range s {
		s[i] = b
	}
	return string(s)
}

// acceptance 180: freeze, advance, unfreeze on a live clock.
func TestClockFreezeAdvanceUnfreeze(t *testing.T) {
	c := Clock{OffsetMs: 250}
	c, _, err := c.ApplyRequest(clockObj("freeze", BoolValue(true)), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := c.Now(1000), c.Now(60000); a != 1250 || b != 1250 {
		t.Fatalf("frozen now = %v, %v; want 1250 both", a, b)
	}
	if c, _, err = c.ApplyRequest(clockObj("advance", IntValue(1000)), 5000); err != nil {
		t.Fatal(err)
	}
	if got := c.Now(7000); got != 2250 {
		t.Fatalf("after advance now = %v, want 2250", got)
	}
	if c, _, err = c.ApplyRequest(clockObj("freeze", BoolValue(false)), 9000); err != nil {
		t.Fatal(err)
	}
	if a, b := c.Now(9000), c.Now(9500); a != 2250 || b != 2750 {
		t.Fatalf("resumed now = %v, %v; want 2250, 2750", a, b)
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"90s", 90000, true},
		{"15m", 900000, true},
		{"2h", 7200000, true},
		{"3d", 259200000, true},
		{"250ms", 250, true},
		{"-1.5s", -1500, true},
		{"0.001s", 1, true},
		{"0.1s", 0.1 * 1000, true},
		{"1.5 m", 90000, true},
		{"  7 \t ms\n", 7, true},
		{"\u00a012h\u3000", 43200000, true}, // JavaScript trim set
		{"\ufeff1s", 1000, true},
		{"007d", 7 * 86400000, true},
		{"bad", 0, false},
		{"", 0, false},
		{"90", 0, false},
		{"s", 0, false},
		{"-s", 0, false},
		{"1.s", 0, false},
		{".5s", 0, false},
		{"+1s", 0, false},
		{"1e3ms", 0, false},
		{"1 week", 0, false},
		{"1S", 0, false},
		{"1sec", 0, false},
		{"1ms s", 0, false},
		{"- 1s", 0, false},
		{"1,5s", 0, false},
		{"\x851s", 0, false},                    // U+0085 is not JavaScript whitespace
		{"١s", 0, false},                        // \d is ASCII only
		{repeatByte('9', 400) + "ms", 0, false}, // not a finite binary64
	}
	for _, tt := range tests {
		got, ok := ParseDuration(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if got, _ := ParseDuration("-0s"); !math.Signbit(got) {
		t.Errorf("ParseDuration(-0s) = %v, want -0", got)
	}
}

func TestParseISO8601(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"2023-11-14T22:13:20Z", 1700000000000, true},
		{"2023-11-14T22:13:20", 1700000000000, true}, // no offset: UTC
		{"2023-11-14", 1699920000000, true},          // midnight UTC
		{"2023-11-14T22:13", 1699999980000, true},
		{"2023-11-14T22:13Z", 1699999980000, true},
		{"2023-11-14T22:13:20+02:00", 1699992800000, true},
		{"2023-11-14T22:13:20-05:30", 1700019800000, true},
		{"2023-11-14T22:13+00:00", 1699999980000, true},
		{"2023-11-14T22:13:20.125Z", 1700000000125, true},
		{"2023-11-14T22:13:20.1239Z", 1700000000123, true}, // truncated, not rounded
		{"2023-11-14T22:13:20.9999999", 1700000000999, true},
		{"2023-11-14T22:13:20.5+01:00", 1699996400500, true},
		{"2023-11-14T22:13:20.1", 1700000000100, true},
		{"1970-01-01T00:00:00Z", 0, true},
		{"1969-12-31T23:59:59.999Z", -1, true},
		{"2024-02-29", 1709164800000, true},
		{"0001-01-01", -62135596800000, true},
		{"9999-12-31T23:59:59.999Z", 253402300799999, true},
		{"nope", 0, false},
		{"", 0, false},
		{"2023-11-14T", 0, false},
		{"2023-11-14T22", 0, false},
		{"2023-11-14T22:13:20.Z", 0, false},
		{"2023-11-14T22:13.5Z", 0, false},
		{"2023-11-14T22:13:2Z", 0, false},
		{"2023-11-14 22:13:20Z", 0, false},
		{"2023-11-14t22:13:20z", 0, false},
		{"2023-11-14Z", 0, false},
		{"2023-11-14T22:13:20+0200", 0, false},
		{"2023-11-14T22:13:20+02", 0, false},
		{"2023-11-14T22:13:20+24:00", 0, false},
		{"2023-11-14T22:13:20Z ", 0, false},
		{" 2023-11-14", 0, false},
		{"2023-13-01", 0, false},
		{"2023-00-01", 0, false},
		{"2023-02-29", 0, false},
		{"2023-04-31", 0, false},
		{"2023-11-00", 0, false},
		{"2023-11-14T24:00", 0, false},
		{"2023-11-14T23:60", 0, false},
		{"2023-11-14T23:59:60", 0, false},
		{"23-11-14", 0, false},
		{"+02023-11-14", 0, false},
		{"2023/11/14", 0, false},
		{"1700000000000", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseISO8601(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseISO8601(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFormatISOMillis(t *testing.T) {
	tests := []struct {
		ms   float64
		want string
	}{
		{1700000000000, "2023-11-14T22:13:20.000Z"},
		{1700000000125, "2023-11-14T22:13:20.125Z"},
		{1700000000125.9, "2023-11-14T22:13:20.125Z"}, // truncated
		{1709164800000, "2024-02-29T00:00:00.000Z"},
		{0, "1970-01-01T00:00:00.000Z"},
		{-0.5, "1970-01-01T00:00:00.000Z"}, // toward zero
		{-1, "1969-12-31T23:59:59.999Z"},
		{-62167219200000, "0000-01-01T00:00:00.000Z"},
		{-62167219200001, "-000001-12-31T23:59:59.999Z"},
		{253402300799999, "9999-12-31T23:59:59.999Z"},
		{253402300800000, "+010000-01-01T00:00:00.000Z"},
		{8.64e15, "+275760-09-13T00:00:00.000Z"},
		{-8.64e15, "-271821-04-20T00:00:00.000Z"},
		{8.64e15 + 1, ""},
		{math.Inf(1), ""},
		{math.NaN(), ""},
	}
	for _, tt := range tests {
		if got := FormatISOMillis(tt.ms); got != tt.want {
			t.Errorf("FormatISOMillis(%v) = %q, want %q", tt.ms, got, tt.want)
		}
	}
	// Round trip over the parser.
	for _, ms := range []float64{0, 1, 1700000000125, 951782400000, -86400001, 253402300799999} {
		if got, ok := ParseISO8601(FormatISOMillis(ms)); !ok || got != ms {
			t.Errorf("round trip of %v = %v, %v", ms, got, ok)
		}
	}
}

// A live clock set to the top of the range and read later still renders: its
// now stays at 8.64e15, so the journal's "at" of a request is not empty.
func TestClockLiveAtTheEdge(t *testing.T) {
	c, _, err := Clock{}.ApplyRequest(mustParse(t, `{"set":8.64e15}`), 1000)
	if err != nil {
		t.Fatal(err)
	}
	later := c.Now(61000)
	if later != 8.64e15 || FormatISOMillis(later) != "+275760-09-13T00:00:00.000Z" {
		t.Fatalf("now a minute later = %v (%q)", later, FormatISOMillis(later))
	}
	if f, _, err := c.ApplyRequest(mustParse(t, `{"freeze":true}`), 61000); err != nil || f.Now(0) != 8.64e15 {
		t.Fatalf("frozen at %v, %v", f.Now(0), err)
	}
	// It advances from where it stands: back by 1 ms is in range, forward is not.
	if b, _, err := c.ApplyRequest(mustParse(t, `{"advance":-1}`), 61000); err != nil || b.Now(61000) != 8.64e15-1 {
		t.Fatalf("advanced by -1 to %v, %v", b.Now(61000), err)
	}
	if f, _, err := c.ApplyRequest(mustParse(t, `{"advance":1}`), 61000); err == nil || err.Message != msgClockAdvanceRange || f != c {
		t.Fatalf("advanced by 1: %+v, %v", f, err)
	}
}
