package runs

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Expected values are CPython 3 repr() output.
func TestFormatPyFloat(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		// wire.md §3.1 table.
		{1700000000, "1700000000.0"},
		{1700000000.125, "1700000000.125"},
		{1700003600001.0 / 1000, "1700003600.001"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e+16"},
		{1e-4, "0.0001"},
		{1e-5, "1e-05"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{5e-324, "5e-324"},
		{-2.5e-7, "-2.5e-07"},
		{12345.678e2, "1234567.8"},
		// More CPython repr() values.
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{math.NaN(), "NaN"},
		{0.1, "0.1"},
		{1.0 / 3, "0.3333333333333333"},
		{-1.5, "-1.5"},
		{100, "100.0"},
		{1e22, "1e+22"},
		{1e-7, "1e-07"},
		{9999999999999998, "9999999999999998.0"},
		{123456789012345680, "1.2345678901234568e+17"},
		{0.001, "0.001"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
		{1.5e300, "1.5e+300"},
		{1e100, "1e+100"},
		{123.456, "123.456"},
		{0.30000000000000004, "0.30000000000000004"},
		{1.25e-5, "1.25e-05"},
		{0.764, "0.764"},
	}
	for _, tt := range tests {
		if got := FormatPyFloat(tt.f); got != tt.want {
			t.Errorf("FormatPyFloat(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

// Every finite rendering reads back as the same binary64.
func TestFormatPyFloatRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := FormatPyFloat(f)
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(f) {
			t.Fatalf("FormatPyFloat(%b) = %q reads back as %v (%v)", f, s, back, err)
		}
	}
}

// Expected values are JavaScript String(x) output (wire.md §3.2).
func TestFormatJSNumber(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{1700000000000, "1700000000000"},
		{math.Copysign(0, -1), "0"},
		{0, "0"},
		{1.5, "1.5"},
		{0.30000000000000004, "0.30000000000000004"},
		{1e21, "1e+21"},
		{-1e21, "-1e+21"},
		{1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"},
		{1e-6, "0.000001"},
		{0.000001234, "0.000001234"},
		{123456789012345680000, "123456789012345680000"},
		{999999999999999900000, "999999999999999900000"},
		{-2.5, "-2.5"},
		{1e300, "1e+300"},
		{5e-324, "5e-324"},
		{1234.5678, "1234.5678"},
		{9007199254740994, "9007199254740994"},
		{764, "764"},
		{0.764, "0.764"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{100, "100"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		if got := FormatJSNumber(tt.f); got != tt.want {
			t.Errorf("FormatJSNumber(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func BenchmarkFormatPyFloat(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	for b.Loop() {
		buf = appendPyFloat(buf[:0], 1700000000.125)
	}
}
