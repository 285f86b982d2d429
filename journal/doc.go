// Package journal holds the request journal (controls.md §7) — per-namespace
// ring buffers of privacy-safe entries and the GET/DELETE /__admin/requests
// query rules — and the global request metrics (controls.md §9). It has no HTTP
// code: the vendor pipeline adds entries and the admin router writes the
// bodies it returns.
//
// The journal is the one place durationMs is rounded: callers hand Add and
// Metrics.Record the raw wall-clock milliseconds, and both round them to 2
// decimals the same way, so the journal and the metrics always agree.
package journal
