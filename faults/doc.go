// Package faults holds the fault rules of the control plane (controls.md §6):
// the rule store behind POST/GET/DELETE /__admin/faults, the preset table, and
// the per-request matching walk that decides delays, drops, fault responses
// and effects. It has no HTTP code: the admin router and the vendor pipeline
// call it and write what it returns.
//
// A rule without a string id gets "fault_<number of rules + 1>", literally as
// controls.md §6.2 says: after a delete that id can repeat, and the new rule
// then replaces the stored rule of the same id in place (the seed package's
// behaviour, kept on purpose).
package faults
