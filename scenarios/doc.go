// Package scenarios is the autopilot (docs/scenarios.md): a scenario file makes
// runs move by themselves, deterministically, on the emulator clock.
//
// A scenario is a list of steps, and every step is one of the existing Hermes
// controls (observe, events, an approval observation, steer delivery) with a
// delay. This package holds everything about scenarios that does not touch
// state:
//
//   - set.go, parse.go, yaml.go: the file (YAML or JSON), validated up front with
//     errors that name the first bad field by path, e.g.
//     "scenarios[0].steps[2].observe: result fields require completed status".
//     Step bodies are checked by the controls' own rules in package runs, so the
//     messages are the controls' own.
//   - match.go: which scenario drives a new run (first match in file order), and
//     Sets: every namespace's set — its own, else the default — at most a bound
//     of namespaces holding their own, and what all hold together bounded.
//   - held.go: the two counts all sets together are bounded by: JSON values,
//     and the size of compiled regular expressions (instructions and runes).
//   - cursor.go: a run's position in its scenario (a plain value) and the pure
//     transitions: a step fired, an approval answered, a stop, the run
//     finished by hand while the scenario waited for an answer.
//   - queue.go: the due steps of every run, earliest first (ties: admission order,
//     then step order); Follow keeps a run's entry equal to its cursor's, and
//     Drain fires them in that order up to a time.
//   - timer.go: one timer for the earliest due step while the clock runs; nothing
//     runs while there is nothing to do.
//
// The gateway keeps cursors in the namespace state (so checkpoints capture
// them), applies the steps, and keeps the queue in step with its cursors.
package scenarios
