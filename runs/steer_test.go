package runs

import (
	"strings"
	"testing"
)

func TestSteeredEvent(t *testing.T) {
	want := `{"event":"run.steered","run_id":"` + testRunID + `","timestamp":1700000000.125,"accepted":true}`
	if got := render(SteeredEvent(testRunID, 1700000000.125)); got != want {
		t.Errorf("SteeredEvent = %s, want %s", got, want)
	}
}

func TestSteerTextErrors(t *testing.T) {
	const (
		missing = "400|invalid_steer_input|Missing non-empty steer text; expected 'input', 'message', or 'text'."
		nonText = "501|operation_not_implemented|Mockingbird: non-text steer input is outside the verified subset"
	)
	cases := []struct {
		body string // "" = an unparseable body, passed as {}
		want string
	}{
		// acceptance 138
		{"", missing},
		{`[]`, missing},
		{`[1]`, missing},
		{`{}`, missing},
		{`{"input":"   "}`, missing},
		{`{"text":"   "}`, missing},
		{`"text"`, missing},
		{`null`, missing},
		{`{"input":[1,null,true,{"type":"image_url"},{"type":"text"},{"type":"text","text":""},[]]}`, missing},
		{`{"input":[{"type":1,"text":5}]}`, missing},
		{`{"input":"\u2028\u3000\t"}`, missing},
		// acceptance 140
		{`{"input":5}`, nonText},
		{`{"input":true}`, nonText},
		{`{"input":{"text":"x"}}`, nonText},
		{`{"input":"","message":0,"text":1.5}`, nonText},
		{`{"input":[{"type":"text","text":5}]}`, nonText},
		{`{"input":[{"type":" Input_Text ","text":{"a":1}}]}`, nonText},
		{`{"input":[[[{"type":"output_text","text":[1]}]]]}`, nonText},
	}
	for _, c := range cases {
		body := ObjectValue(nil)
		if c.body != "" {
			body = mustParse(t, c.body)
		}
		text, err := SteerText(body)
		if got := errText(err); got != c.want {
			t.Errorf("SteerText(%s) = %s, want %s", c.body, got, c.want)
		}
		if text != "" {
			t.Errorf("SteerText(%s) returned text %q with an error", c.body, text)
		}
	}
}

// nest wraps s in n arrays.
func nest(s string, n int) string { return strings.Repeat("[", n) + s + strings.Repeat("]", n) }

func TestSteerText(t *testing.T) {
	big := strings.Repeat("é", 70000)
	cases := []struct {
		body string
		want string
	}{
		{`{"input":"focus on tests"}`, "focus on tests"},
		{`{"input":"  padded\n"}`, "padded"},
		// acceptance 139
		{`{"input":"","message":"m"}`, "m"},
		{`{"text":[{"type":"text","text":"a"},"b",{"type":"image_url"}]}`, "a\nb"},
		{`{"input":null,"message":[],"text":"t"}`, "t"},
		{`{"input":"i","message":"m","text":"t"}`, "i"},
		{`{"input":[{"type":"text","text":"also run the tests"}]}`, "also run the tests"},
		{`{"input":[{"type":" INPUT_TEXT ","text":"a"},{"type":"output_text","text":"b"},{"type":"text","text":null}]}`, "a\nb"},
		{`{"input":["", "a", 1, "b"]}`, "a\nb"},
		{`{"input":["a",["b",["c"]],"d"]}`, "a\nb\nc\nd"},
		{`{"input":["a",[],"b"]}`, "a\nb"},
		{`{"input":[" a ", "b "]}`, "a \nb"},
		// nesting: 10 levels below the top-level list contribute, 11 do not
		{`{"input":` + nest(`"deep"`, 11) + `}`, "deep"},
		{`{"input":["top",` + nest(`"deep"`, 11) + `]}`, "top"},
		{`{"input":["top",` + nest(`{"type":"text","text":5}`, 11) + `]}`, "top"},
	}
	for _, c := range cases {
		text, err := SteerText(mustParse(t, c.body))
		if err != nil || text != c.want {
			t.Errorf("SteerText(%s) = %q, %s; want %q", c.body, text, errText(err), c.want)
		}
	}
	// Length limits: a string, an array of parts, and the 1000-item limit.
	limits := []struct {
		name string
		body string
		want string
	}{
		{"string cut", `{"input":"` + big + `"}`, strings.Repeat("é", 65536)},
		{"part cut and join cut", `{"input":["` + big + `","x"]}`, strings.Repeat("é", 65536)},
		{"join cut, separator stripped", `{"input":["` + strings.Repeat("a", 65535) + `","bc"]}`, strings.Repeat("a", 65535)},
		{"join then strip", `{"input":["` + strings.Repeat("a", 65534) + `","bc"]}`, strings.Repeat("a", 65534) + "\nb"},
		{"1000 items", `{"input":[` + strings.Repeat(`"x",`, 1000) + `"y"]}`, strings.TrimSuffix(strings.Repeat("x\n", 1000), "\n")},
		{"1000 items nested", `{"input":[[` + strings.Repeat(`1,`, 999) + `"y"]]}`, "y"},
		{"1001 items nested", `{"input":[[` + strings.Repeat(`1,`, 1000) + `"y"]]}`, ""},
	}
	for _, c := range limits {
		text, err := SteerText(mustParse(t, c.body))
		if c.want == "" {
			if errText(err) != "400|invalid_steer_input|Missing non-empty steer text; expected 'input', 'message', or 'text'." {
				t.Errorf("%s: %s", c.name, errText(err))
			}
			continue
		}
		if err != nil || text != c.want {
			t.Errorf("%s: got %d code points (%s), want %d", c.name, CodePoints(text), errText(err), CodePoints(c.want))
		}
	}
}
