// Package reliability is the long reliability suite of hermes-emulator (issue
// 6). It builds the binary once and drives it as a real process over HTTP:
//
//   - 1,000 concurrent identical keyed submissions admit exactly one run;
//   - kill -9 / restart cycles on one --db file never lose an acknowledged
//     keyed run (runs-api §10.4) and never reuse a run id;
//   - hostile input (invalid UTF-8, BOM, deep nesting, huge numbers, long
//     keys and headers, oversized bodies) gets a clear error or the spec's
//     behaviour and never takes the process down;
//   - SIGTERM with an open stream and a request in flight exits 0 promptly
//     and leaves a database that reopens cleanly.
//
// The tests are behind the build tag "reliability", so `go test ./...` skips
// them; run them with `make reliability`, i.e.
//
//	go test -tags reliability -count=1 -timeout 60m -v ./reliability/...
//
// Environment: RELIABILITY_CYCLES (kill/restart cycles, default 100, or 10
// with -short), RELIABILITY_SEED (the load's random seed; default: the time)
// and RELIABILITY_RACE (non-empty: build the emulator with -race and fail on
// any data race it reports).
// The figures (cycles, acknowledged runs checked, lost, peak RSS) are logged.
package reliability
