package runs

// RNG is the process-wide mulberry32 generator of fault rate draws
// (controls.md §6.7). Its whole state is State: a checkpoint captures it and a
// checkout restores it. The zero value is the generator of seed 0.
type RNG struct{ State uint32 }

// SeedFromString turns a --seed value into the initial RNG state
// (controls.md §6.7): a decimal integer — ASCII digits with an optional leading
// '-' — is taken modulo 2^32 (exactly, whatever its length; a negative n gives
// 2^32 − (|n| mod 2^32), as JavaScript's n >>> 0); any other string is hashed with
// FNV1a32. Examples: "42" → 42, "demo" → 2935829814.
func SeedFromString(seed string) uint32 {
	digits := seed
	neg := false
	if len(digits) > 0 && digits[0] == '-' {
		neg, digits = true, digits[1:]
	}
	if digits == "" {
		return FNV1a32(seed)
	}
	var m uint64 // the value mod 2^32 so far
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return FNV1a32(seed)
		}
		m = (m*10 + uint64(c-'0')) & 0xFFFFFFFF
	}
	if neg {
		return uint32(-m)
	}
	return uint32(m)
}

// Next advances the generator and returns a draw in [0, 1): mulberry32, all
// arithmetic modulo 2^32 (controls.md §6.7). Seed 0 gives 0.26642920868471265,
// 0.0003297457005828619, 0.2232720274478197.
func (r *RNG) Next() float64 {
	r.State += 0x6D2B79F5
	t := r.State
	t = (t ^ t>>15) * (t | 1)
	t ^= t + (t^t>>7)*(t|61)
	return float64(t^t>>14) / 4294967296
}
