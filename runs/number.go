package runs

import (
	"math"
	"strconv"
)

var (
	posInf = math.Inf(1)
	negInf = math.Inf(-1)
)

// FormatPyFloat renders a binary64 as Python's repr does (wire.md §3.1):
// shortest round-trip digits, fixed notation with at least ".0" when the decimal
// exponent E of d.ddd×10^E satisfies -4 <= E < 16, else d.ddde±XX with at least
// two exponent digits; zeros keep their sign ("-0.0"); ±Inf is Infinity /
// -Infinity and NaN is NaN (the parser never produces it).
func FormatPyFloat(f float64) string {
	var b [32]byte
	return string(appendPyFloat(b[:0], f))
}

// appendPyFloat appends FormatPyFloat(f) without allocating.
func appendPyFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f != f:
		return append(dst, "NaN"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var b [32]byte
	d, e := shortestDigits(b[:0], f)
	if e >= -4 && e < 16 {
		dst = appendFixed(dst, d, e)
		if e+1 >= len(d) {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	return appendExponent(dst, d, e, 2)
}

// appendExponent writes digits d with exponent e as d[0][.d[1:]]e±n, the
// exponent written with at least minDigits digits (Python 2, JavaScript 1).
func appendExponent(dst, d []byte, e, minDigits int) []byte {
	dst = append(dst, d[0])
	if len(d) > 1 {
		dst = append(dst, '.')
		dst = append(dst, d[1:]...)
	}
	dst = append(dst, 'e')
	if e < 0 {
		dst = append(dst, '-')
		e = -e
	} else {
		dst = append(dst, '+')
	}
	if minDigits == 2 && e < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(e), 10)
}

// FormatJSNumber renders a number as JavaScript's Number.prototype.toString
// does (wire.md §3.2), for numbers the control plane computes: integral values
// below 1e21 in magnitude without a fraction ("-0" → "0"), other values with
// the shortest round-trip digits in fixed notation when 1e-6 <= |v| < 1e21, else
// as <d>[.<ddd>]e±<n> ("1e+21", "1.5e-7").
func FormatJSNumber(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f != f:
		return "NaN"
	case f == 0:
		return "0"
	}
	var out [40]byte
	dst := out[:0]
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var b [32]byte
	d, e := shortestDigits(b[:0], f)
	if e >= -6 && e < 21 {
		// JavaScript's n = e+1 with -6 < n <= 21: fixed notation.
		return string(appendFixed(dst, d, e))
	}
	return string(appendExponent(dst, d, e, 1))
}

// shortestDigits appends the shortest round-trip decimal digits of f (> 0, finite)
// to dst, without trailing zeros, and returns them with the exponent e such
// that f = d[0].d[1:] × 10^e.
func shortestDigits(dst []byte, f float64) ([]byte, int) {
	s := strconv.AppendFloat(dst, f, 'e', -1, 64) // d[.ddd]e±XX
	i := 0
	for s[i] != 'e' {
		i++
	}
	exp := 0
	neg := s[i+1] == '-'
	for _, c := range s[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if neg {
		exp = -exp
	}
	d := s[:i]
	if len(d) > 1 { // drop the '.'
		copy(d[1:], d[2:])
		d = d[:len(d)-1]
	}
	for len(d) > 1 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	return d, exp
}

// appendFixed appends digits d with exponent e (f = d[0].d[1:] × 10^e) in
// plain decimal notation, adding zeros as needed; no ".0" is added.
func appendFixed(dst, d []byte, e int) []byte {
	if e < 0 {
		dst = append(dst, '0', '.')
		for i := -1; i > e; i-- {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
	if e+1 >= len(d) {
		dst = append(dst, d...)
		for i := len(d); i <= e; i++ {
			dst = append(dst, '0')
		}
		return dst
	}
	dst = append(dst, d[:e+1]...)
	dst = append(dst, '.')
	return append(dst, d[e+1:]...)
}
