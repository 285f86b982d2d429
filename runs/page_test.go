package runs

import "testing"

func TestPageCursor(t *testing.T) {
	for _, c := range []struct {
		cursor string
		want   PageKey
		ok     bool
	}{
		{"", PageKey{}, true},
		{PageKey{1700000000.5, "run_a"}.Cursor(), PageKey{1700000000.5, "run_a"}, true},
		{PageKey{0, "run/b"}.Cursor(), PageKey{0, "run/b"}, true},
		{"!!", PageKey{}, false},           // not base64
		{"MTIz", PageKey{}, false},         // "123": no id
		{"eC9ydW5fYQ", PageKey{}, false},   // "x/run_a": no number
		{"TmFOL3J1bl9h", PageKey{}, false}, // "NaN/run_a"
		{"SW5mL3J1bl9h", PageKey{}, false}, // "Inf/run_a"
	} {
		got, ok := ParseCursor(c.cursor)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ParseCursor(%q) = %+v, %v; want %+v, %v", c.cursor, got, ok, c.want, c.ok)
		}
	}
}

func TestPageKeyBefore(t *testing.T) {
	for _, c := range []struct {
		k, o PageKey
		want bool
	}{
		{PageKey{2, "a"}, PageKey{1, "z"}, true},
		{PageKey{1, "z"}, PageKey{2, "a"}, false},
		{PageKey{1, "b"}, PageKey{1, "a"}, true},
		{PageKey{1, "a"}, PageKey{1, "b"}, false},
		{PageKey{1, "a"}, PageKey{1, "a"}, false},
	} {
		if got := c.k.Before(c.o); got != c.want {
			t.Errorf("%+v.Before(%+v) = %v, want %v", c.k, c.o, got, c.want)
		}
		if got := c.k.Compare(c.o); (got < 0) != c.want || (got == 0) != (c.k == c.o) {
			t.Errorf("%+v.Compare(%+v) = %d", c.k, c.o, got)
		}
	}
}
