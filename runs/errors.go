package runs

import "strconv"

// Envelope is the shape of an error body (runs-api §2).
type Envelope uint8

// The error envelopes of the contract.
const (
	// EnvHermes: {"error":{"message":M,"type":"invalid_request_error","param":null,"code":C}}.
	EnvHermes Envelope = iota
	// EnvAuth: {"error":{"message":M,"type":"gateway_auth_error","code":"gateway_auth_failed"}}.
	EnvAuth
	// EnvSessionKey: {"error":{"message":M,"type":"invalid_request_error"}}.
	EnvSessionKey
	// EnvThrottle: {"error":{"message":M,"type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}.
	EnvThrottle
	// EnvUnsupported: {"error":{"message":"Mockingbird: "+detail,"type":"mockingbird_unsupported","param":null,"code":"operation_not_implemented"}}.
	EnvUnsupported
	// EnvPageNotFound: {"message":"page not found"}.
	EnvPageNotFound
	// EnvAdmin: {"error":{"type":"mockingbird_admin","message":M}}.
	EnvAdmin
	// EnvInternal: {"error":{"type":"mockingbird_internal","message":M}}.
	EnvInternal
)

// Error is the one error type of the emulator: the contract's envelope, code and
// exact message, and the HTTP status it is answered with.
type Error struct {
	Status   int
	Envelope Envelope
	Code     string // the envelope's "code"; "" renders as null
	Message  string
}

func (e *Error) Error() string { return e.Message }

// RetryAfter reports whether the answer carries "Retry-After: 1" (runs-api
// §14.1, §14.2): throttling, draining, and every other 429 (hardening H3's
// too many namespaces), as RunCreate's 429 promises it.
func (e *Error) RetryAfter() bool {
	return e.Code == "rate_limit_exceeded" || e.Code == "gateway_draining" || e.Code == "server_busy" || e.Status == 429
}

// hermesStatus is the one table from a Hermes-envelope code to its HTTP status.
// Code "" (rendered null) is a 400.
var hermesStatus = map[string]int{
	"":                         400,
	"invalid_idempotency_key":  400,
	"invalid_approval_request": 400,
	"invalid_approval_choice":  400,
	"invalid_steer_input":      400,
	"run_not_found":            404,
	"idempotency_key_conflict": 409,
	"run_not_active":           409,
	"mock_terminal_run":        409,
	"approval_not_active":      409,
	"approval_not_pending":     409,
	"run_not_accepting_steer":  409,
	"steer_not_accepted":       409,
	"body_too_large":           413,
	"gateway_draining":         503,
	"server_busy":              503,
}

// Hermes returns a Hermes-envelope error; its status comes from the code table.
// An unknown code is a programming error and panics.
func Hermes(code, message string) *Error {
	st, ok := hermesStatus[code]
	if !ok {
		panic("runs: unknown Hermes error code " + strconv.Quote(code))
	}
	return &Error{Status: st, Envelope: EnvHermes, Code: code, Message: message}
}

// Unsupported returns the explicit out-of-subset 501 (runs-api §6.8).
func Unsupported(detail string) *Error {
	return &Error{Status: 501, Envelope: EnvUnsupported, Code: "operation_not_implemented", Message: "Mockingbird: " + detail}
}

// Admin returns an admin-envelope error with the given status.
func Admin(status int, message string) *Error {
	return &Error{Status: status, Envelope: EnvAdmin, Message: message}
}

// Internal returns the 500 for an unexpected failure.
func Internal(message string) *Error {
	return &Error{Status: 500, Envelope: EnvInternal, Message: message}
}

// Storage is a failed read or write of the store, as it is answered: 500
// with the error's text, which package storage begins with "storage: ".
func Storage(err error) *Error { return Internal(err.Error()) }

// Errors of the public operations with fixed texts.
var (
	ErrPageNotFound   = &Error{Status: 404, Envelope: EnvPageNotFound, Message: "page not found"}
	ErrAuth           = &Error{Status: 401, Envelope: EnvAuth, Code: "gateway_auth_failed", Message: "Invalid gateway API key (API_SERVER_KEY)"}
	ErrBodyTooLarge   = Hermes("body_too_large", "Request body too large.")
	ErrInvalidJSON    = Hermes("", "Invalid JSON")
	ErrDraining       = Hermes("gateway_draining", "Gateway is draining existing work; retry shortly.")
	ErrKeyConflict    = Hermes("idempotency_key_conflict", "Idempotency-Key was already used with a different request payload")
	ErrInvalidKey     = Hermes("invalid_idempotency_key", "Idempotency-Key must be 1-255 visible ASCII characters")
	ErrSessionInvalid = &Error{Status: 400, Envelope: EnvSessionKey, Message: "Invalid session key"}
	ErrSessionTooLong = &Error{Status: 400, Envelope: EnvSessionKey, Message: "Session key too long"}
	// ErrServerBusy: more request bodies are held than --max-inflight-body-bytes
	// allows, and none was released within the read timeout (hardening H5).
	ErrServerBusy = Hermes("server_busy", "Request body backlog full.")
	// ErrAdminKey: a control request, or a vendor request carrying history
	// headers (hardening H1), without the configured admin key (controls §1).
	ErrAdminKey = Admin(401, "missing or wrong x-mockingbird-admin-key")
)

// EchoLimit is the most bytes of a client's path an error message echoes
// (hardening H9).
const EchoLimit = 1024

// Echo returns s cut to its first EchoLimit bytes (at a UTF-8 character
// boundary when one is near), for error messages that quote a path or id.
func Echo(s string) string {
	if len(s) <= EchoLimit {
		return s
	}
	cut := EchoLimit
	for i := 0; i < 3 && cut > 0 && s[cut]&0xC0 == 0x80; i++ {
		cut--
	}
	return s[:cut]
}

// Throttle returns the capacity 429 (runs-api §14.1).
func Throttle(max int) *Error {
	return &Error{Status: 429, Envelope: EnvThrottle, Code: "rate_limit_exceeded", Message: "Too many concurrent runs (max " + strconv.Itoa(max) + ")"}
}

// RunNotFound is the 404 of every run-addressing operation.
// The id is echoed up to EchoLimit bytes (hardening H9).
func RunNotFound(id string) *Error { return Hermes("run_not_found", "Run not found: "+Echo(id)) }

// Body renders the envelope as compact JSON (wire.md §4.3).
func (e *Error) Body() []byte {
	msg := QuoteString(e.Message)
	var s string
	switch e.Envelope {
	case EnvHermes, EnvThrottle, EnvUnsupported:
		typ := "invalid_request_error"
		if e.Envelope == EnvThrottle {
			typ = "rate_limit_error"
		} else if e.Envelope == EnvUnsupported {
			typ = "mockingbird_unsupported"
		}
		code := "null"
		if e.Code != "" {
			code = QuoteString(e.Code)
		}
		s = `{"error":{"message":` + msg + `,"type":"` + typ + `","param":null,"code":` + code + `}}`
	case EnvAuth:
		s = `{"error":{"message":` + msg + `,"type":"gateway_auth_error","code":"gateway_auth_failed"}}`
	case EnvSessionKey:
		s = `{"error":{"message":` + msg + `,"type":"invalid_request_error"}}`
	case EnvPageNotFound:
		s = `{"message":"page not found"}`
	case EnvAdmin:
		s = `{"error":{"type":"mockingbird_admin","message":` + msg + `}}`
	default:
		s = `{"error":{"type":"mockingbird_internal","message":` + msg + `}}`
	}
	return []byte(s)
}
