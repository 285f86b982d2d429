package scenarios

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Messages of the file's own rules (a step body's messages are its control's).
// msgAfter names the bounds of after: a duration string is an int64 of
// nanoseconds (time.ParseDuration), a number at most maxAfterMs.
const (
	msgRoot          = `expected {"scenarios":[...]}`
	msgList          = "expected a list of scenarios"
	msgObject        = "expected an object"
	msgUnsupported   = "unsupported field"
	msgName          = "must match " + runs.NameRule
	msgNameString    = "expected a string (in YAML, quote a name such as 1, 1.0, true or null)"
	msgString        = "expected a string"
	msgSteps         = "expected a non-empty list of steps"
	msgStepList      = "expected a list of steps"
	msgSteers        = "expected deliver or keep"
	msgAfter         = `expected a duration such as "250ms" (at most 2562047h) or a number of milliseconds (at most 8.64e15), at least 0`
	msgOneAction     = "expected exactly one of observe, events, approval, deliver_steers"
	msgDeliverSteers = "expected true"
	msgValues        = "the set holds more than 1,000,000 values"
)

var (
	scenarioKeys = map[string]bool{"name": true, "match": true, "steps": true, "if_denied": true, "on_stop": true, "steers": true}
	matchKeys    = map[string]bool{"input": true, "model": true, "session_id": true}
	stepKeys     = map[string]bool{"after": true, "observe": true, "events": true, "approval": true, "deliver_steers": true}
)

// Parse reads a scenario file, YAML or JSON, and validates all of it (scenarios
// §1, §4). The error is a 400 Hermes envelope whose message names the first bad
// field by path, e.g. "scenarios[0].steps[2].observe: result fields require
// completed status"; a file that is not YAML/JSON at all says so.
func Parse(data []byte) (*Set, *runs.Error) {
	v, err := decode(data)
	if err != nil {
		return nil, runs.Hermes("", err.Error())
	}
	return FromValue(v)
}

// FromValue validates a parsed scenario file (see Parse). v is kept, unchanged,
// as the set's JSON form. A set whose regular expressions alone compile past
// MaxHeldRegexpSize is refused with the 409 of Sets.Put, before the rest of
// them are compiled.
func FromValue(v runs.Value) (*Set, *runs.Error) {
	if v.Kind != runs.Object {
		return nil, bad("", msgRoot)
	}
	// A set is kept for as long as its namespace has it: every value counts
	// (maxValues), as a YAML file's are counted (held.go).
	set := &Set{source: v}
	if !count(v, &set.values) {
		return nil, bad("", msgValues)
	}
	for _, k := range v.Obj.Keys {
		if k != "scenarios" {
			return nil, bad(field("", k), msgUnsupported)
		}
	}
	list, ok := v.Obj.Get("scenarios")
	if !ok || list.Kind != runs.Array {
		return nil, bad("scenarios", msgList)
	}
	if len(list.Arr) > MaxScenarios {
		return nil, bad("scenarios", "at most "+strconv.Itoa(MaxScenarios)+" scenarios")
	}
	seen := map[string]bool{}
	for i, el := range list.Arr {
		p := "scenarios[" + strconv.Itoa(i) + "]"
		sc, err := parseScenario(p, el, &set.regexpSize)
		if err != nil {
			return nil, err
		}
		if seen[sc.Name] {
			return nil, bad(p+".name", "duplicate name "+strconv.Quote(sc.Name))
		}
		seen[sc.Name] = true
		set.Scenarios = append(set.Scenarios, sc)
	}
	return set, nil
}

// bad is a validation error at path (the root when path is "").
func bad(path, msg string) *runs.Error {
	if path == "" {
		return runs.Hermes("", msg)
	}
	return runs.Hermes("", path+": "+msg)
}

// object returns v's object when v is one holding only keys of allowed: else
// the error names p (not an object) or the first other key.
func object(p string, v runs.Value, allowed map[string]bool) (*runs.Obj, *runs.Error) {
	if v.Kind != runs.Object {
		return nil, bad(p, msgObject)
	}
	for _, k := range v.Obj.Keys {
		if !allowed[k] {
			return nil, bad(field(p, k), msgUnsupported)
		}
	}
	return v.Obj, nil
}

// plainKey is a key a path names as is (p.key); maxEcho bounds what an error
// repeats of a key or a regular expression from the file.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

const maxEcho = 64

// field is the path of key k of the object at p: p.k, or p["k"] — quoted,
// and cut after maxEcho bytes — when k is not a plain name (a line break, a
// dot, a 1 MB key), so that an error stays one short line that names the
// field unambiguously.
func field(p, k string) string {
	if plainKey.MatchString(k) {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	return p + "[" + echo(k) + "]"
}

// echo is s quoted as a Go string, cut after at most maxEcho bytes, at a
// character's start ("…" then follows the closing quote).
func echo(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	n := maxEcho
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]) + "…"
}

// regexpError is the message of a regular expression that does not compile:
// Go's, which repeats the expression in backquotes, unless the expression
// holds a line break or another unprintable character or is longer than
// maxEcho — then it is quoted and cut (echo), so the error stays one line.
func regexpError(err error) string {
	var se *syntax.Error
	if !errors.As(err, &se) || (len(se.Expr) <= maxEcho && strings.IndexFunc(se.Expr, func(r rune) bool { return !strconv.IsPrint(r) }) < 0) {
		return err.Error()
	}
	return "error parsing regexp: " + string(se.Code) + ": " + echo(se.Expr)
}

func parseScenario(p string, v runs.Value, size *int) (*Scenario, *runs.Error) {
	o, err := object(p, v, scenarioKeys)
	if err != nil {
		return nil, err
	}
	sc := &Scenario{IfDenied: defaultIfDenied(), OnStop: defaultOnStop()}
	name, ok := o.Get("name")
	// The name rule of namespaces and branches (runs.ValidName). A name that
	// is not a string is told so: "must match" misled for name: 1 in YAML,
	// which reads 1 as a number although "1" matches.
	if ok && name.Kind != runs.String {
		return nil, bad(p+".name", msgNameString)
	}
	if !runs.ValidName(name.Str) {
		return nil, bad(p+".name", msgName)
	}
	sc.Name = name.Str
	if m, ok := o.Get("match"); ok {
		match, err := parseMatch(p+".match", m, size)
		if err != nil {
			return nil, err
		}
		sc.Match = match
	}
	steps, _ := o.Get("steps")
	if steps.Kind != runs.Array || len(steps.Arr) == 0 {
		return nil, bad(p+".steps", msgSteps)
	}
	if sc.Steps, err = parseSteps(p+".steps", steps); err != nil {
		return nil, err
	}
	for _, l := range []struct {
		key string
		dst *[]Step
	}{{"if_denied", &sc.IfDenied}, {"on_stop", &sc.OnStop}} {
		if v, ok := o.Get(l.key); ok {
			if v.Kind != runs.Array {
				return nil, bad(p+"."+l.key, msgStepList)
			}
			if *l.dst, err = parseSteps(p+"."+l.key, v); err != nil {
				return nil, err
			}
		}
	}
	if s, ok := o.Get("steers"); ok {
		if s.Kind != runs.String || (s.Str != "deliver" && s.Str != "keep") {
			return nil, bad(p+".steers", msgSteers)
		}
		sc.DeliverSteers = s.Str == "deliver"
	}
	return sc, nil
}

// parseMatch compiles the match's regular expressions, adding their sizes to
// *size; past MaxHeldRegexpSize, the 409 of Sets.Put (a next one is not
// compiled).
func parseMatch(p string, v runs.Value, size *int) (Match, *runs.Error) {
	var m Match
	if _, err := object(p, v, matchKeys); err != nil {
		return m, err
	}
	re := func(k string) (*regexp.Regexp, *runs.Error) {
		s, ok := v.Obj.Get(k)
		if !ok {
			return nil, nil
		}
		if s.Kind != runs.String {
			return nil, bad(p+"."+k, msgString)
		}
		r, err := regexp.Compile(s.Str)
		if err != nil {
			return nil, bad(p+"."+k, regexpError(err))
		}
		if *size += regexpSize(s.Str); *size > MaxHeldRegexpSize {
			return nil, runs.Admin(409, msgHeldRegexp)
		}
		return r, nil
	}
	var err *runs.Error
	if m.Input, err = re("input"); err != nil {
		return m, err
	}
	if s, ok := v.Obj.Get("model"); ok {
		if s.Kind != runs.String {
			return m, bad(p+".model", msgString)
		}
		m.Model = &s.Str
	}
	if m.SessionID, err = re("session_id"); err != nil {
		return m, err
	}
	return m, nil
}

func parseSteps(p string, v runs.Value) ([]Step, *runs.Error) {
	if len(v.Arr) > MaxSteps {
		return nil, bad(p, "at most "+strconv.Itoa(MaxSteps)+" steps")
	}
	steps := make([]Step, 0, len(v.Arr))
	for j, el := range v.Arr {
		st, err := parseStep(p+"["+strconv.Itoa(j)+"]", el)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// parseStep validates one step: its keys, after, exactly one action, and the
// action's body by its control's rules (controls.md §11.1–11.3).
func parseStep(q string, v runs.Value) (Step, *runs.Error) {
	var st Step
	o, err := object(q, v, stepKeys)
	if err != nil {
		return st, err
	}
	after, ok := o.Get("after")
	if st.AfterMs, ok = afterMs(after, ok); !ok {
		return st, bad(q+".after", msgAfter)
	}
	n := 0
	for _, k := range [...]string{"observe", "events", "approval", "deliver_steers"} {
		if o.Has(k) {
			n++
		}
	}
	if n != 1 {
		return st, bad(q, msgOneAction)
	}
	if b, ok := o.Get("observe"); ok {
		st.Action, st.Body = Observe, b
		if _, err := runs.ParseObserve(b, true, nil); err != nil {
			return st, runs.Hermes("", q+"."+err.Message) // "observe: …"
		}
	}
	if b, ok := o.Get("events"); ok {
		st.Action, st.Body = Events, objectValue("events", b)
		if _, err := runs.ParseEvents(st.Body, true); err != nil {
			return st, runs.Hermes("", q+"."+err.Message) // "events…: …"
		}
	}
	if a, ok := o.Get("approval"); ok {
		if a.Kind != runs.Object {
			return st, bad(q+".approval", msgObject)
		}
		st.Action, st.Body = Approval, objectValue("status", runs.StringValue(runs.WaitingForApproval), "approval", a)
		if _, err := runs.ParseObserve(st.Body, true, nil); err != nil {
			return st, bad(q+".approval", strings.TrimPrefix(err.Message, "observe: approval "))
		}
	}
	if d, ok := o.Get("deliver_steers"); ok {
		if d.Kind != runs.Bool || !d.Bool {
			return st, bad(q+".deliver_steers", msgDeliverSteers)
		}
		st.Action, st.Body = DeliverSteers, runs.NullValue()
	}
	return st, nil
}

// afterMs reads a step's after: a Go duration string ("0s", "250ms", "1.5s",
// "2m") or a number of milliseconds, finite, at least 0 and at most the clock's
// bound. A missing after is refused.
func afterMs(v runs.Value, present bool) (float64, bool) {
	var ms float64
	switch {
	case !present:
		return 0, false
	case v.Kind == runs.String:
		d, err := time.ParseDuration(v.Str)
		if err != nil {
			return 0, false
		}
		ms = float64(d) / float64(time.Millisecond)
	case v.Kind == runs.Int:
		f, err := strconv.ParseFloat(v.Int, 64)
		if err != nil {
			return 0, false
		}
		ms = f
	case v.Kind == runs.Float:
		ms = v.Float
	default:
		return 0, false
	}
	if math.IsNaN(ms) || ms < 0 || ms > maxAfterMs {
		return 0, false
	}
	return ms, true
}

// fileError is a failure to read the file at path as one "path: reason" line,
// like the file's own errors: "s.yaml: no such file", "dir: is a directory",
// "s.yaml: permission denied" (without the operation and the path again).
func fileError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no such file", path)
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %v", path, err)
}

// MaxFileBytes bounds a scenario file read by Load.
const MaxFileBytes = 10 << 20

// Load reads and validates the scenario file at path (serve --scenarios). The
// error is one line naming the file and the first bad field by path, e.g.
// "s.yaml: scenarios[0].steps[2].observe: result fields require completed status".
func Load(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fileError(path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxFileBytes)
	}
	set, perr := Parse(data)
	if perr != nil {
		return nil, fmt.Errorf("%s: %s", path, perr.Message)
	}
	return set, nil
}
