package runs

import "testing"

// pyWhitespace is the Python-strip set of runs-api §1.
var pyWhitespace = []rune{
	0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
	0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
}

func TestPyStripEachCodePoint(t *testing.T) {
	for _, r := range pyWhitespace {
		w := string(r)
		for _, in := range []string{w + "a" + w, w + w + "a b" + w + w, w} {
			want := PyStrip(in)
			switch in {
			case w:
				if want != "" {
					t.Errorf("PyStrip(%U alone) = %q, want empty", r, want)
				}
			case w + "a" + w:
				if want != "a" {
					t.Errorf("PyStrip(%U a %U) = %q, want \"a\"", r, r, want)
				}
			default:
				if want != "a b" {
					t.Errorf("PyStrip(%U%U a b %U%U) = %q, want \"a b\"", r, r, r, r, want)
				}
			}
		}
	}
}

func TestPyStrip(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{" \t\n a \u3000b \r\n", "a \u3000b"},
		// Not in the set: kept.
		{"\u200Bx\u200B", "\u200Bx\u200B"},
		{"\uFEFFx\uFEFF", "\uFEFFx\uFEFF"},
		{"\x1Bx\x1B", "\x1Bx\x1B"},
		{"\x08x\x0E", "\x08x\x0E"},
		{"\u0084x\u0086", "\u0084x\u0086"},
		{"\u180Ex\u180E", "\u180Ex\u180E"},
		{"\u200Cx\u2027", "\u200Cx\u2027"},
		// Bytes that only look like whitespace in Latin-1 are not stripped here.
		{"\x85x\xa0", "\x85x\xa0"},
		// A WTF-8 surrogate and an invalid byte stop stripping.
		{" \xed\xa0\x80 ", "\xed\xa0\x80"},
		{" \xff ", "\xff"},
		{"\u2028\U0001F600\u2029", "\U0001F600"},
	}
	for _, tt := range tests {
		if got := PyStrip(tt.in); got != tt.want {
			t.Errorf("PyStrip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPyStripLatin1(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\x85delivery\x85", "delivery"}, // acceptance 48
		{"\xa0key\xa0", "key"},
		{"\x09\x0a\x0b\x0c\x0d\x1c\x1d\x1e\x1f\x20k\x20", "k"},
		{"\x85\xa0", ""},
		// U+0085 as UTF-8 is the bytes C2 85: C2 (Â) is not whitespace.
		{"\xc2\x85k", "\xc2\x85k"},
		{"k\xc2\x85", "k\xc2"},
		{"\x08k\x1b", "\x08k\x1b"},
		{"\x84k\x86\xa1", "\x84k\x86\xa1"},
		{"a \x85 b", "a \x85 b"},
	}
	for _, tt := range tests {
		if got := PyStripLatin1(tt.in); got != tt.want {
			t.Errorf("PyStripLatin1(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCodePoints(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		trim int    // argument of TruncateCodePoints
		head string // its result
	}{
		{"", 0, 3, ""},
		{"abc", 3, 2, "ab"},
		{"abc", 3, 5, "abc"},
		{"abc", 3, 0, ""},
		{"abc", 3, -1, ""},
		{"é\u3000\U0001F600x", 4, 3, "é\u3000\U0001F600"},
		{"\xed\xa0\x80\xed\xb0\x80", 2, 1, "\xed\xa0\x80"}, // WTF-8 surrogates count 1 each
		{"\xffa\xfe", 3, 2, "\xffa"},                       // invalid bytes count 1 each
		{"\xed\xa0", 2, 1, "\xed"},                         // a truncated sequence is invalid bytes
		{"\xe2\x82", 2, 1, "\xe2"},
	}
	for _, tt := range tests {
		if got := CodePoints(tt.s); got != tt.n {
			t.Errorf("CodePoints(%q) = %d, want %d", tt.s, got, tt.n)
		}
		if got := TruncateCodePoints(tt.s, tt.trim); got != tt.head {
			t.Errorf("TruncateCodePoints(%q, %d) = %q, want %q", tt.s, tt.trim, got, tt.head)
		}
	}
}

// runs-api §13.
func TestSeconds(t *testing.T) {
	tests := []struct{ ms, want float64 }{
		{1700000000125, 1700000000.125},
		{1700000000000, 1700000000.0},
		{1700003600001, 1700003600.001},
		{1700000000000.5, 1700000000.0005},
		{0, 0},
	}
	for _, tt := range tests {
		if got := Seconds(tt.ms); got != tt.want {
			t.Errorf("Seconds(%v) = %v, want %v", tt.ms, got, tt.want)
		}
	}
}

func TestTextAllocations(t *testing.T) {
	s := " \u3000hello\u2029 "
	if n := testing.AllocsPerRun(100, func() {
		_ = PyStrip(s)
		_ = PyStripLatin1(s)
		_ = CodePoints(s)
		_ = TruncateCodePoints(s, 3)
	}); n != 0 {
		t.Errorf("text helpers allocate %v times, want 0", n)
	}
}
