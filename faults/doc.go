// Package faults holds the fault rules of the control plane (controls.md §6):
// the rule store behind POST/GET/DELETE /__admin/faults, the preset table, and
// the per-request matching walk that decides delays, drops, fault responses
// and effects. It has no HTTP code: the admin router and the vendor pipeline
// call it and write what it returns.
package faults
