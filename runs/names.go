package runs

// ValidName reports whether s is a valid namespace or branch name (runs-api
// §3): 1–64 characters from A–Z, a–z, 0–9, '_', '.' and '-'.
func ValidName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// NameRule is the pattern ValidName accepts, as messages quote it.
const NameRule = "/^[A-Za-z0-9_.-]{1,64}$/"

// BadName is the error of an invalid name: what names it ("branch",
// "x-mockingbird-namespace", …) must match NameRule. status is 400 for a
// header, 409 for a timeline operation (controls §8).
func BadName(what string, status int) *Error {
	return Admin(status, what+" must match "+NameRule)
}
