package runs

import (
	"math"
	"strconv"
)

// The dates of the clock control and the journal (controls.md §5, §7.2):
// ISO-8601 parsing and JavaScript's toISOString rendering, on a proleptic
// Gregorian calendar within a JavaScript Date's range.

// ParseISO8601 parses the ISO-8601 forms of controls.md §5 to epoch ms:
// YYYY-MM-DD (midnight UTC) and YYYY-MM-DDTHH:MM[:SS[.f…]] followed by Z, ±HH:MM
// or nothing (read as UTC). Fractional seconds are truncated to milliseconds.
// Fields are range-checked (month 1–12, day within the month of a proleptic
// Gregorian year, hour 0–23, minute and second 0–59, offset hour 0–23).
// "2023-11-14T22:13:20Z" → 1700000000000.
func ParseISO8601(s string) (float64, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	year, ok1 := digitsAt(s, 0, 4)
	month, ok2 := digitsAt(s, 5, 2)
	day, ok3 := digitsAt(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return 0, false
	}
	ms := daysFromCivil(year, month, day) * 86400000
	if len(s) == 10 {
		return float64(ms), true
	}
	// THH:MM
	if len(s) < 16 || s[10] != 'T' || s[13] != ':' {
		return 0, false
	}
	hour, ok1 := digitsAt(s, 11, 2)
	minute, ok2 := digitsAt(s, 14, 2)
	if !ok1 || !ok2 || hour > 23 || minute > 59 {
		return 0, false
	}
	ms += (hour*60 + minute) * 60000
	i := 16
	if i < len(s) && s[i] == ':' {
		sec, ok := digitsAt(s, i+1, 2)
		if !ok || sec > 59 {
			return 0, false
		}
		ms += sec * 1000
		i += 3
		if i < len(s) && s[i] == '.' {
			i++
			fs := i
			var frac int64
			for i < len(s) && isDecDigit(s[i]) {
				if i-fs < 3 {
					frac = frac*10 + int64(s[i]-'0')
				}
				i++
			}
			if i == fs {
				return 0, false
			}
			for k := i - fs; k < 3; k++ {
				frac *= 10
			}
			ms += frac
		}
	}
	switch rest := s[i:]; {
	case rest == "" || rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digitsAt(rest, 1, 2)
		om, ok2 := digitsAt(rest, 4, 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, false
		}
		off := (oh*60 + om) * 60000
		if rest[0] == '+' {
			ms -= off
		} else {
			ms += off
		}
	default:
		return 0, false
	}
	return float64(ms), true
}

// digitsAt reads n ASCII digits of s at i.
func digitsAt(s string, i, n int) (int64, bool) {
	if i+n > len(s) {
		return 0, false
	}
	var v int64
	for k := i; k < i+n; k++ {
		if !isDecDigit(s[k]) {
			return 0, false
		}
		v = v*10 + int64(s[k]-'0')
	}
	return v, true
}

// daysIn is the number of days of a month of the proleptic Gregorian calendar.
func daysIn(year, month int64) int64 {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d (proleptic
// Gregorian; H. Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDivInt(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDivInt(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

func floorDivInt(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// maxDateMs is the limit of a JavaScript Date (±8.64e15 ms).
const maxDateMs = 8.64e15

// FormatISOMillis renders epoch ms as JavaScript's Date.prototype.toISOString
// (controls.md §7.1 journal `at`, §8.1 checkpoint `at`): the value is truncated
// toward zero to whole ms, then "YYYY-MM-DDTHH:MM:SS.mmmZ" in UTC, with the
// extended year form ±YYYYYY outside years 0000–9999.
// 1700000000000 → "2023-11-14T22:13:20.000Z". A value that is not finite or
// beyond ±8.64e15 (where JavaScript throws) renders as "".
func FormatISOMillis(ms float64) string {
	if math.IsNaN(ms) || math.Abs(ms) > maxDateMs {
		return ""
	}
	t := int64(ms) // truncation toward zero, as TimeClip
	days := floorDivInt(t, 86400000)
	rem := t - days*86400000
	y, mo, d := civilFromDays(days)
	var b [32]byte
	out := b[:0]
	switch {
	case y >= 0 && y <= 9999:
		out = appendPadded(out, y, 4)
	case y < 0:
		out = appendPadded(append(out, '-'), -y, 6)
	default:
		out = appendPadded(append(out, '+'), y, 6)
	}
	out = appendPadded(append(out, '-'), mo, 2)
	out = appendPadded(append(out, '-'), d, 2)
	out = appendPadded(append(out, 'T'), rem/3600000, 2)
	out = appendPadded(append(out, ':'), rem/60000%60, 2)
	out = appendPadded(append(out, ':'), rem/1000%60, 2)
	out = appendPadded(append(out, '.'), rem%1000, 3)
	return string(append(out, 'Z'))
}

// appendPadded appends the non-negative v in decimal, left-padded with '0' to width.
func appendPadded(dst []byte, v int64, width int) []byte {
	var num [20]byte
	d := strconv.AppendInt(num[:0], v, 10)
	for i := len(d); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}
