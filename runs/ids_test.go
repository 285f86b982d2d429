package runs

import (
	"testing"
	"unicode/utf16"
)

// acceptance 195 (default rows), runs-api §12.1 table.
func TestRunID(t *testing.T) {
	tests := []struct {
		ns    string
		n     int64
		token string
		id    string
	}{
		{"default", 1, "NhZrbqDSHBjJpx3d", "run_4e685a726271445348426a4a70783364"},
		{"default", 2, "Wp3IpRXf7AbgiulZ", "run_57703349705258663741626769756c5a"},
		{"default", 3, "wwKgw2pygiV9ao5a", "run_77774b677732707967695639616f3561"},
		{"a", 1, "J0331iD4wunz17Pi", "run_4a3033333169443477756e7a31375069"},
		{"a", 2, "oQXZu8loT9Q9weyh", "run_6f51585a75386c6f5439513977657968"},
		{"b", 1, "CCmIt8xtlw5FXSFe", "run_43436d49743878746c77354658534665"},
		{"other", 1, "WfBnNuTlhTZHfXdn", "run_5766426e4e75546c68545a486658646e"},
	}
	for _, tt := range tests {
		sns := StorageNS(tt.ns)
		input := "hermes-runs:" + sns + ":run_:" + itoa(tt.n)
		if got := Token(input, 16); got != tt.token {
			t.Errorf("Token(%q, 16) = %q, want %q", input, got, tt.token)
		}
		if got := RunID(sns, tt.n); got != tt.id {
			t.Errorf("RunID(%q, %d) = %q, want %q", sns, tt.n, got, tt.id)
		}
	}
}

// acceptance 134 (namespace a), runs-api §12.2 table.
func TestApprovalID(t *testing.T) {
	tests := []struct {
		ns   string
		k    int64
		want string
	}{
		{"default", 1, "4f517459436b5145434675544552396b"},
		{"default", 2, "736e4c454d6965545178773063376169"},
		{"a", 1, "6d39726f333372366a76576b73653944"},
	}
	for _, tt := range tests {
		if got := ApprovalID(StorageNS(tt.ns), tt.k); got != tt.want {
			t.Errorf("ApprovalID(%q, %d) = %q, want %q", tt.ns, tt.k, got, tt.want)
		}
	}
}

func TestStorageNS(t *testing.T) {
	tests := []struct{ ns, branch, want string }{
		{"default", "main", "hermes"},
		{"a", "main", "hermes:a"},
		{"default", "feature", "hermes:branch_gej81s"}, // runs-api §12.1 example
	}
	for _, tt := range tests {
		if got := BranchStorageNS(tt.ns, tt.branch); got != tt.want {
			t.Errorf("BranchStorageNS(%q, %q) = %q, want %q", tt.ns, tt.branch, got, tt.want)
		}
	}
	if got := StorageNS("default"); got != "hermes" {
		t.Errorf("StorageNS(default) = %q", got)
	}
	if got := StorageNS("Default"); got != "hermes:Default" {
		t.Errorf("StorageNS(Default) = %q", got)
	}
	// The NUL separators matter: ("ab","c") and ("a","bc") differ.
	if BranchStorageNS("ab", "c") == BranchStorageNS("a", "bc") {
		t.Error("BranchStorageNS ignores the separator")
	}
	// The first run of branch feature of default (runs-api §12.1).
	if got, want := RunID(BranchStorageNS("default", "feature"), 1), "run_52676a54676b33764f30706a7170455a"; got != want {
		t.Errorf("branch RunID = %q, want %q", got, want)
	}
}

// controls.md §8.1.
func TestCheckpointID(t *testing.T) {
	tests := []struct {
		seq  int64
		want string
	}{
		{1, "cp_00000001"},
		{2, "cp_00000002"},
		{10, "cp_0000000a"},
		{35, "cp_0000000z"},
		{36, "cp_00000010"},
		{2821109907455, "cp_zzzzzzzz"},
		{2821109907456, "cp_100000000"},
	}
	for _, tt := range tests {
		if got := CheckpointID(tt.seq); got != tt.want {
			t.Errorf("CheckpointID(%d) = %q, want %q", tt.seq, got, tt.want)
		}
	}
}

// runs-api §9.
func TestScopeHash(t *testing.T) {
	tests := []struct{ profile, identity, want string }{
		{DefaultProfile, DefaultIdentity, "845264e061c6175ac63594c814e4c557f82d402d80b8e6a01e1568a41c9e6cf0"},
		// sha256("\x00") — both parts empty.
		{"", "", "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"},
	}
	for _, tt := range tests {
		if got := ScopeHash(tt.profile, tt.identity); got != tt.want {
			t.Errorf("ScopeHash(%q, %q) = %q, want %q", tt.profile, tt.identity, got, tt.want)
		}
	}
}

// refFNVUnits is FNV-1a-32 written directly over UTF-16 code units (controls.md §6.7).
func refFNVUnits(units []uint16) uint32 {
	h := uint32(2166136261)
	for _, c := range units {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

func TestFNV1a32(t *testing.T) {
	tests := []struct {
		name  string
		s     string
		units []uint16
	}{
		{"empty", "", nil},
		{"ascii", "demo", []uint16{'d', 'e', 'm', 'o'}},
		{"two-byte", "é", []uint16{0xE9}},
		{"three-byte", "\u3000x", []uint16{0x3000, 'x'}},
		{"astral is a surrogate pair", "a\U0001F600", utf16.Encode([]rune("a\U0001F600"))},
		{"WTF-8 lone surrogate", "\xed\xa0\x80", []uint16{0xD800}},
		{"WTF-8 low surrogate", "x\xed\xbf\xbf", []uint16{'x', 0xDFFF}},
		{"invalid byte is U+FFFD", "a\xff", []uint16{'a', 0xFFFD}},
	}
	for _, tt := range tests {
		if got, want := FNV1a32(tt.s), refFNVUnits(tt.units); got != want {
			t.Errorf("%s: FNV1a32(%q) = %d, want %d", tt.name, tt.s, got, want)
		}
	}
	if got := FNV1a32("demo"); got != 2935829814 { // controls.md §6.7
		t.Errorf("FNV1a32(demo) = %d, want 2935829814", got)
	}
}

func TestMix(t *testing.T) {
	for _, s := range []string{"", "a", "hermes-runs:hermes:run_:1:0", "\U0001F600\xed\xa0\x80"} {
		h := refFNVUnits(utf16.Encode([]rune(s)))
		if s == "\U0001F600\xed\xa0\x80" {
			h = refFNVUnits([]uint16{0xD83D, 0xDE00, 0xD800})
		}
		h ^= h >> 16
		h *= 0x85EBCA6B
		h ^= h >> 13
		if got := Mix(s); got != h {
			t.Errorf("Mix(%q) = %d, want %d", s, got, h)
		}
	}
}

// refTokenSpec is token() of runs-api §12.1 written as the pseudo-code reads.
func refTokenSpec(input string, length int) string {
	out := ""
	for round := 0; len(out) < length; round++ {
		h := Mix(input + ":" + itoa(int64(round)))
		for k := 0; k < 5 && len(out) < length; k++ {
			out += string(tokenAlphabet[h%62])
			h /= 62
		}
	}
	return out
}

func TestToken(t *testing.T) {
	tests := []struct {
		input  string
		length int
	}{
		{"x", 0}, {"x", 1}, {"x", 5}, {"x", 6}, {"x", 16}, {"x", 33}, {"hermes-runs:hermes:run_:1", 64}, {"é\U0001F600", 16},
	}
	for _, tt := range tests {
		got := Token(tt.input, tt.length)
		if want := refTokenSpec(tt.input, tt.length); got != want {
			t.Errorf("Token(%q, %d) = %q, want %q", tt.input, tt.length, got, want)
		}
		if len(got) != tt.length {
			t.Errorf("Token(%q, %d) has length %d", tt.input, tt.length, len(got))
		}
	}
	if got := Token("x", -1); got != "" {
		t.Errorf("Token(x, -1) = %q", got)
	}
}

func TestCounterMark(t *testing.T) {
	tests := []struct{ n, mark, want int64 }{
		{0, 0, 0},                               // nothing handed out, nothing stored
		{1, 0, 1 + CounterBlock},                // the first id reserves a block
		{2, 1 + CounterBlock, 1 + CounterBlock}, // covered: unchanged
		{1 + CounterBlock, 1 + CounterBlock, 1 + CounterBlock},
		{2 + CounterBlock, 1 + CounterBlock, 2 + 2*CounterBlock}, // past the mark: the next block
		{4, 3, 4 + CounterBlock},                                 // one past an exact mark (Close stores the counter itself)
	}
	for _, tt := range tests {
		if got := CounterMark(tt.n, tt.mark); got != tt.want {
			t.Errorf("CounterMark(%d, %d) = %d, want %d", tt.n, tt.mark, got, tt.want)
		}
	}
}

func TestIDsAllocations(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = RunID("hermes:namespace", 12345) }); n > 1 {
		t.Errorf("RunID allocates %v times, want ≤ 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = FNV1a32("hermes\x00é\U0001F600") }); n != 0 {
		t.Errorf("FNV1a32 allocates %v times, want 0", n)
	}
}
