package journal

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Issue is one finding of the contract validator on a rejected request
// (controls.md §7.1 `issues`): where it was and a JSON pointer or parameter
// name — never a value.
type Issue struct {
	In      string // "body", "header", "path" or "query"
	Pointer string // JSON pointer or parameter name
}

// RequestMeta is the `request` object of an entry (controls.md §7.1). A nil
// field renders as null. ContentType and TransferEncoding hold the raw header
// bytes; each byte is rendered as one code point (Latin-1, wire.md §5).
type RequestMeta struct {
	ContentType      *string
	TransferEncoding *string
	BodyBytes        *int64 // Content-Length when all digits, else nil
}

// Entry is one journaled vendor request (controls.md §7.1). It holds only
// these fields, so an entry can never carry bodies, prompts, outputs, query
// strings, keys or tokens (the privacy rule of §7.1).
type Entry struct {
	Namespace   string  // the request's namespace (the raw name when invalid)
	OperationID string  // matched operationId; "" → key absent and "unmatched":true
	Method      string  // HTTP method
	Path        string  // path after /ns stripping, without query string
	Status      int     // response status; 0 when the connection was dropped
	DurationMs  float64 // wall-clock handling time in ms, unrounded: Add and Metrics.Record round it
	FaultID     string  // controls.md §6.6; "" = key absent
	RunID       string  // `ids.runId`; "" = key absent
	Accepted    bool    // the request marked its mutation accepted: `accepted` and `checkpoint`
	Checkpoint  string  // the accepted mutation's checkpoint (rendered only with Accepted)
	// Request is set by the caller only for status >= 400 not produced by a
	// fault rule; Issues are rendered only with Request, and only when non-empty.
	Request *RequestMeta
	Issues  []Issue
	At      float64 // controlled clock epoch ms when recorded; rendered as ISO-8601
}

// roundMs rounds to 2 decimals as JavaScript's Math.round(v*100)/100 does
// (halves toward +Infinity). It is the one place durationMs is rounded: the
// journal (Add) and the metrics (Record) both call it on the raw value they
// are given, so an entry's durationMs and its share of totalDurationMs agree.
func roundMs(v float64) float64 {
	x := v * 100
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return v
	}
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return r / 100
}

// AppendJSON appends the entry as compact JSON with the keys of controls.md
// §7.1 in order: service, namespace, operationId (only when matched), method,
// path, status, durationMs, unmatched, faultId, ids, accepted, checkpoint,
// request, issues, at. Computed numbers use JavaScript rendering (wire.md §3.2).
func (e *Entry) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"service":"hermes","namespace":`...)
	dst = append(dst, runs.QuoteString(e.Namespace)...)
	if e.OperationID != "" {
		dst = append(dst, `,"operationId":`...)
		dst = append(dst, runs.QuoteString(e.OperationID)...)
	}
	dst = append(dst, `,"method":`...)
	dst = append(dst, runs.QuoteString(e.Method)...)
	dst = append(dst, `,"path":`...)
	dst = append(dst, runs.QuoteString(e.Path)...)
	dst = append(dst, `,"status":`...)
	dst = strconv.AppendInt(dst, int64(e.Status), 10)
	dst = append(dst, `,"durationMs":`...)
	dst = append(dst, runs.FormatJSNumber(e.DurationMs)...)
	if e.OperationID == "" {
		dst = append(dst, `,"unmatched":true`...)
	} else {
		dst = append(dst, `,"unmatched":false`...)
	}
	if e.FaultID != "" {
		dst = append(dst, `,"faultId":`...)
		dst = append(dst, runs.QuoteString(e.FaultID)...)
	}
	if e.RunID != "" {
		dst = append(dst, `,"ids":{"runId":`...)
		dst = append(dst, runs.QuoteString(e.RunID)...)
		dst = append(dst, '}')
	}
	if e.Accepted {
		dst = append(dst, `,"accepted":true,"checkpoint":`...)
		dst = append(dst, runs.QuoteString(e.Checkpoint)...)
	}
	if m := e.Request; m != nil {
		dst = append(dst, `,"request":{"contentType":`...)
		dst = appendLatin1OrNull(dst, m.ContentType)
		dst = append(dst, `,"bodyBytes":`...)
		if m.BodyBytes == nil {
			dst = append(dst, "null"...)
		} else {
			dst = strconv.AppendInt(dst, *m.BodyBytes, 10)
		}
		dst = append(dst, `,"transferEncoding":`...)
		dst = appendLatin1OrNull(dst, m.TransferEncoding)
		dst = append(dst, '}')
		if len(e.Issues) > 0 {
			dst = append(dst, `,"issues":[`...)
			for i, is := range e.Issues {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"in":`...)
				dst = append(dst, runs.QuoteString(is.In)...)
				dst = append(dst, `,"pointer":`...)
				dst = append(dst, runs.QuoteString(is.Pointer)...)
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
	}
	dst = append(dst, `,"at":`...)
	dst = append(dst, runs.QuoteString(runs.FormatISOMillis(e.At))...)
	return append(dst, '}')
}

// appendLatin1OrNull appends null for nil, else the header bytes as a JSON
// string with each byte read as one code point (wire.md §5).
func appendLatin1OrNull(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	raw := *s
	for i := 0; i < len(raw); i++ {
		if raw[i] >= utf8.RuneSelf {
			u := make([]rune, len(raw))
			for j := 0; j < len(raw); j++ {
				u[j] = rune(raw[j])
			}
			return append(dst, runs.QuoteString(string(u))...)
		}
	}
	return append(dst, runs.QuoteString(raw)...)
}
