// Package runs is the pure domain of the Hermes peer-run emulator: the JSON value
// model with Python semantics, the run record and its transitions, request
// validation, the idempotency fingerprint, identifiers, the seeded RNG and the
// errors the contract defines.
//
// It imports only the standard library: no HTTP, no SQL, no generated code.
// Time and identifiers are always passed in; nothing here reads a clock.
package runs
