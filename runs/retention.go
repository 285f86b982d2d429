package runs

import "math"

// Retention (runs-api §11): every period the emulator keeps something for, in
// seconds of the controlled clock. They are the only place these numbers live.
const (
	// SweepTick is the period of the lazy retention schedule (§11.1): a
	// sweep runs at most once per tick, at the first request after it is due.
	SweepTick = 60.0
	// CacheRetention is how long a completed, failed or cancelled run stays
	// in the cache layer after its last update (§11.2).
	CacheRetention = 3600.0
	// DurableRetention is how long a terminal reservation stays after its
	// durable updatedAt before a keyed admission prunes it (§11.3).
	DurableRetention = 86400.0
	// TransportRetention is how long an unsubscribed SSE transport lives
	// after its creation (§11.2).
	TransportRetention = 300.0
)

// NextSweep is the tick a sweep due at next runs for when the clock reads now
// (now ≥ next): the last tick not after now (§11.1).
func NextSweep(next, now float64) float64 {
	return next + math.Floor((now-next)/SweepTick)*SweepTick
}

// Expired reports whether something stamped at was retained for longer than
// period when the clock reads now: strictly more, so exactly period is kept.
func Expired(at, now, period float64) bool { return now-at > period }
