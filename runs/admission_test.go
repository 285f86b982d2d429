package runs

import "testing"

// Every case of the admission decision, with the error each refusal answers.
func TestDecide(t *testing.T) {
	for _, c := range []struct {
		name string
		f    AdmissionFacts
		want Decision
		err  *Error
	}{
		{"keyless, no limit", AdmissionFacts{}, Create, nil},
		{"keyless, below the limit", AdmissionFacts{Live: 1, Max: 2}, Create, nil},
		{"keyless, at the limit", AdmissionFacts{Live: 2, Max: 2}, AtCapacity, Throttle(2)},
		{"keyless, above the limit", AdmissionFacts{Live: 3, Max: 2}, AtCapacity, Throttle(2)},
		{"new key", AdmissionFacts{Live: 5}, Create, nil},
		{"replay", AdmissionFacts{Reserved: true, SameFingerprint: true}, Replay, nil},
		{"replay at the limit", AdmissionFacts{Reserved: true, SameFingerprint: true, Live: 2, Max: 2}, Replay, nil},
		{"conflict", AdmissionFacts{Reserved: true}, Conflict, ErrKeyConflict},
		{"conflict at the limit", AdmissionFacts{Reserved: true, Live: 2, Max: 2}, Conflict, ErrKeyConflict},
		{"draining", AdmissionFacts{Draining: true}, Draining, ErrDraining},
		{"draining beats a replay", AdmissionFacts{Draining: true, Reserved: true, SameFingerprint: true}, Draining, ErrDraining},
		{"draining beats capacity", AdmissionFacts{Draining: true, Live: 9, Max: 1}, Draining, ErrDraining},
	} {
		got := Decide(c.f)
		if got != c.want {
			t.Errorf("%s: Decide = %d, want %d", c.name, got, c.want)
		}
		err := got.Err(c.f.Max)
		if (err == nil) != (c.err == nil) || err != nil && *err != *c.err {
			t.Errorf("%s: Err = %+v, want %+v", c.name, err, c.err)
		}
	}
	if Throttle(2).Status != 429 || ErrKeyConflict.Status != 409 || ErrDraining.Status != 503 {
		t.Error("statuses of the refusals")
	}
}
