package runs

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Clock is the one controlled clock (controls.md §5). It is a value: the wall
// clock is passed in, so every rule here is pure. Live, now = wall + OffsetMs;
// frozen, now = FrozenMs. OffsetMs is kept while frozen (it is part of the state
// shown by GET /__admin/clock) and recomputed on unfreeze. The zero value is the
// live clock without offset (the state after reset).
type Clock struct {
	Frozen   bool
	FrozenMs float64 // the fixed instant while Frozen
	OffsetMs float64 // added to the wall clock while live
}

// Now is the controlled clock's epoch milliseconds (now_ms of runs-api §1) at wall
// clock wallMs. It stays within ±8.64e15 ms (hardening H6): a live clock set
// at the edge of that range would otherwise run past it as the wall clock
// moves on, and its instants would no longer render (a journal entry's "at"
// came out empty); there it stands still at the edge.
func (c Clock) Now(wallMs float64) float64 {
	return max(-maxDateMs, min(maxDateMs, c.raw(wallMs)))
}

// raw is Now without the range: what "advance" is checked against, once a
// clock standing still at the edge was moved to the edge itself.
func (c Clock) raw(wallMs float64) float64 {
	if c.Frozen {
		return c.FrozenMs
	}
	return wallMs + c.OffsetMs
}

// Errors of POST /__admin/clock (controls.md §5).
const (
	msgClockBody    = "expected a JSON object"
	msgClockSet     = "set: expected epoch ms or ISO-8601"
	msgClockAdvance = `advance: expected ms or "15m"-style`
	// The clock stays within a JavaScript Date's range (hardening H6), so that
	// every timestamp renders and persists as a finite number.
	msgClockSetRange     = "set: out of range (the clock stays within ±8.64e15 ms)"
	msgClockAdvanceRange = "advance: out of range (the clock stays within ±8.64e15 ms)"
)

// ApplyRequest applies a POST /__admin/clock body (controls.md §5) at wall clock
// wallMs, field by field in the spec's order whatever the key order of the body:
//
//  1. "reset": true → live, offset 0.
//  2. "set": a finite number (epoch ms) or an ISO-8601 string (ParseISO8601).
//     Frozen: the instant becomes it; live: the offset is chosen so that now equals it.
//  3. "advance": a finite number of ms or a ParseDuration string. Frozen: moves
//     the instant; live: adds to the offset.
//  4. "freeze": true → frozen at the current now; false → live from the current
//     instant (offset recomputed; a no-op when already live).
//
// Other values of reset and freeze are ignored. A body that is not an object is
// 400 "expected a JSON object". An error (400 admin envelope) stops processing,
// but fields already applied stay applied: the clock as it stands is returned
// with the error.
//
// moved reports whether the request reset, set or advanced the clock: a
// "reset": true, a "set" or an "advance" applied (an advance by 0 included; a
// field that failed, and every field after it, is not applied). A frozen clock
// fires scenario steps only when moved (scenarios §2).
//
// Range (hardening H6): a "set" value, and the now that "advance" leads to,
// must lie within ±8.64e15 ms (maxDateMs), else 400 "set: out of range …" or
// "advance: out of range …" and the clock is returned as it was before the
// request — nothing of it applied.
func (c Clock) ApplyRequest(body Value, wallMs float64) (_ Clock, moved bool, _ *Error) {
	before := c
	if body.Kind != Object {
		return c, false, Admin(400, msgClockBody)
	}
	o := body.Obj
	if v, ok := o.Get("reset"); ok && v.Kind == Bool && v.Bool {
		c, moved = Clock{}, true
	}
	if v, ok := o.Get("set"); ok {
		ms, good := clockSetValue(v)
		if !good {
			return c, moved, Admin(400, msgClockSet)
		}
		if math.Abs(ms) > maxDateMs {
			return before, false, Admin(400, msgClockSetRange)
		}
		moved = true
		if c.Frozen {
			c.FrozenMs = ms
		} else {
			c.OffsetMs = ms - wallMs
		}
	}
	if v, ok := o.Get("advance"); ok {
		d, good := clockAdvanceValue(v)
		if !good {
			return c, moved, Admin(400, msgClockAdvance)
		}
		moved = true
		if now := c.Now(wallMs); c.raw(wallMs) != now { // standing still at the edge: advance from there
			c.OffsetMs = now - wallMs
		}
		if c.Frozen {
			c.FrozenMs += d
		} else {
			c.OffsetMs += d
		}
		if math.Abs(c.raw(wallMs)) > maxDateMs {
			return before, false, Admin(400, msgClockAdvanceRange)
		}
	}
	if v, ok := o.Get("freeze"); ok && v.Kind == Bool {
		if v.Bool && !c.Frozen {
			c.FrozenMs = c.Now(wallMs)
			c.Frozen = true
		} else if !v.Bool && c.Frozen {
			c.OffsetMs = c.FrozenMs - wallMs
			c.Frozen = false
		}
	}
	return c, moved, nil
}

// finiteNumber returns the binary64 value of a number Value when it is finite
// (an integer too large for binary64 is not).
func finiteNumber(v Value) (float64, bool) {
	var f float64
	switch v.Kind {
	case Float:
		f = v.Float
	case Int:
		var err error
		if f, err = strconv.ParseFloat(v.Int, 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsInf(f, 0) && !math.IsNaN(f)
}

func clockSetValue(v Value) (float64, bool) {
	if v.Kind == String {
		return ParseISO8601(v.Str)
	}
	return finiteNumber(v)
}

func clockAdvanceValue(v Value) (float64, bool) {
	if v.Kind == String {
		return ParseDuration(v.Str)
	}
	return finiteNumber(v)
}

// ParseDuration parses an "advance" string (controls.md §5): after trimming
// whitespace at both ends, it must match ^(-?\d+(\.\d+)?)\s*(ms|s|m|h|d)$; the
// result is the number times the unit (1, 1000, 60000, 3600000, 86400000 ms),
// one binary64 multiplication. "90s" → 90000, "-1.5s" → -1500. A result that is
// not a finite binary64 (hundreds of digits) is refused like a mismatch.
//
// Trimming and \s use the JavaScript whitespace set (String.prototype.trim), as
// the seed package did; \d is ASCII only.
func ParseDuration(s string) (float64, bool) {
	s = jsTrim(s)
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && isDecDigit(s[i]) {
		i++
	}
	if i == start {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDecDigit(s[i]) {
			i++
		}
		if i == fs {
			return 0, false
		}
	}
	num := s[:i]
	unit := jsTrim(s[i:]) // the tail is already right-trimmed: this drops \s*
	var mult float64
	switch unit {
	case "ms":
		mult = 1
	case "s":
		mult = 1000
	case "m":
		mult = 60000
	case "h":
		mult = 3600000
	case "d":
		mult = 86400000
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false // out of binary64 range
	}
	if d := f * mult; !math.IsInf(d, 0) {
		return d, true
	}
	return 0, false
}

func isDecDigit(b byte) bool { return b >= '0' && b <= '9' }

// isJSSpace reports whether r is JavaScript WhiteSpace or LineTerminator (the set
// of String.prototype.trim and of \s).
func isJSSpace(r rune) bool {
	switch r {
	case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsTrim removes JavaScript whitespace at both ends of s.
func jsTrim(s string) string {
	for len(s) > 0 {
		r, w := utf8.DecodeRuneInString(s)
		if !isJSSpace(r) {
			break
		}
		s = s[w:]
	}
	for len(s) > 0 {
		r, w := utf8.DecodeLastRuneInString(s)
		if !isJSSpace(r) {
			break
		}
		s = s[:len(s)-w]
	}
	return s
}
