package record

import (
	"strconv"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// Bounds of a recording: a client of the proxy decides how many runs and
// frames cross it, so the recorder keeps at most this much.
const (
	// MaxRuns is the most runs one recording keeps: the scenario loader's own
	// limit on scenarios per set; later admissions are proxied, not recorded.
	MaxRuns = scenarios.MaxScenarios
	// MaxObservations is the most SSE frames kept per run, and the most other
	// observations (changed records, answers, steers, stops); later ones are
	// proxied, not recorded.
	MaxObservations = 10000
	// MaxBodyBytes is the most bytes of one request or response body, or of
	// one SSE event's data (its data lines joined), the recorder reads along; a
	// longer one is forwarded whole but not learnt from.
	MaxBodyBytes = 1 << 20
)

// maxKeptBytes bounds the bytes of all kept observations together (records
// and frames of every run, counted as they crossed): the limits above still
// allow terabytes. Past it nothing more is kept; requests still cross. A
// variable so that a test can lower it.
var maxKeptBytes = 256 << 20

// kind is what one observation of a run is.
type kind uint8

const (
	obsRecord kind = iota + 1 // a run record read by RunGet (or a stop on a terminal run)
	obsFrame                  // one SSE data frame of RunEvents
	obsAnswer                 // an accepted RunApproval (200)
	obsStop                   // an accepted RunStop ({"run_id","status":"stopping"})
	obsSteer                  // an accepted RunSteer (200)
)

// observation is one thing that crossed the proxy about a run, with the local
// time (epoch seconds) it arrived.
type observation struct {
	kind kind
	at   float64
	// body: the record (obsRecord), the event (obsFrame) or the answer
	// (obsAnswer: {"object","run_id","choice",["request_id",]"resolved"}).
	body *runs.Obj
	// text: the normalised steer text (obsSteer).
	text string
}

// runLog is everything learnt about one run, in arrival order. It holds no
// header: no Authorization, no Idempotency-Key, no session key.
type runLog struct {
	seq      int     // admission order among recorded runs, from 1
	runID    string  // the upstream's run id
	admitted float64 // local time of the 202
	// input is the user message text of the submission (userMessage): what
	// the replaying emulator's match.input searches; hasInput is false when it
	// is empty (a message without a text part) or the body was not read.
	input    string
	hasInput bool
	// sessionID is the body's session_id when it is a non-empty string.
	sessionID string
	// sessionOther: the body's session_id is truthy but not a string, so the
	// record's session_id is that value, which no session_id pattern matches.
	sessionOther bool
	obs          []observation
	full         bool // MaxObservations reached
	oversized    int  // SSE events longer than MaxBodyBytes, not learnt
	capped       bool // maxKeptBytes reached (all runs together)
	// frames and others count the observations kept; lastRecord is the
	// bytes of the last record kept.
	frames, others int
	lastRecord     string
}

// add appends an observation unless the run is full: at most MaxObservations
// frames and as many other observations. A polled record equal to the last
// one kept adds nothing (a client polling an idle run fills nothing up).
// It reports whether o was kept.
func (l *runLog) add(o observation, raw []byte) bool {
	if o.kind == obsRecord {
		if string(raw) == l.lastRecord {
			return false
		}
		l.lastRecord = string(raw)
	}
	n := &l.others
	if o.kind == obsFrame {
		n = &l.frames
	}
	if *n >= MaxObservations {
		l.full = true
		return false
	}
	*n++
	l.obs = append(l.obs, o)
	return true
}

// str returns the string value of key k of o ("" when absent or not a string).
func str(o *runs.Obj, k string) string {
	if o == nil {
		return ""
	}
	v, ok := o.Get(k)
	if !ok || v.Kind != runs.String {
		return ""
	}
	return v.Str
}

// num returns the number value of key k of o as a float.
func num(o *runs.Obj, k string) (float64, bool) {
	if o == nil {
		return 0, false
	}
	v, ok := o.Get(k)
	if !ok || v.Kind != runs.Float && v.Kind != runs.Int {
		return 0, false
	}
	if v.Kind == runs.Float {
		return v.Float, true
	}
	f, err := strconv.ParseFloat(v.Int, 64)
	return f, err == nil
}

// userMessage is the user message text of a RunCreate body (runs-api §6.1
// step 9.4 and scenarios §1.2) as the replaying emulator's match.input reads
// it (scenarios.MessageText): a string input itself; for an array input, the
// content of its last element — a string, or the texts of its content parts
// joined with "\n". ok is false when that text is empty (no text part, or
// another shape).
func userMessage(body runs.Value) (text string, ok bool) {
	if body.Kind != runs.Object {
		return "", false
	}
	in, _ := body.Obj.Get("input")
	switch in.Kind {
	case runs.String:
		return in.Str, in.Str != ""
	case runs.Array:
		if len(in.Arr) == 0 || in.Arr[len(in.Arr)-1].Kind != runs.Object {
			return "", false
		}
		c, _ := in.Arr[len(in.Arr)-1].Obj.Get("content")
		text = scenarios.MessageText(c)
		return text, text != ""
	}
	return "", false
}
