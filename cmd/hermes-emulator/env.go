package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The environment variables of serve: every flag reads HERMES_EMULATOR_<FLAG>
// as its default; a variable that does not parse is an error naming the
// variable, unless its flag is given on the command line.

// env returns HERMES_EMULATOR_<name>, or def when it is unset or empty (an
// empty variable counts as unset, docs/options.md).
func env(name, def string) string {
	if v := os.Getenv("HERMES_EMULATOR_" + name); v != "" {
		return v
	}
	return def
}

// envs reads typed environment variables, keeping the invalid ones in order.
type envs struct{ bad []badEnv }

// badEnv is an environment variable that did not parse, with the flag it
// stands for: when that flag is given on the command line, the flag wins and
// the variable is not an error.
type badEnv struct {
	flag string
	err  error
}

// first returns the first invalid variable whose flag fs did not set.
func (e *envs) first(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, b := range e.bad {
		if !set[b.flag] {
			return b.err
		}
	}
	return nil
}

// envParse returns the value of HERMES_EMULATOR_<name> converted by conv, or def
// when the variable is unset or empty. A value conv rejects is recorded as
// `HERMES_EMULATOR_<name>: invalid value "<v>"` and def is returned.
func envParse[T any](e *envs, name string, def T, conv func(string) (T, error)) T {
	v := env(name, "")
	if v == "" {
		return def
	}
	x, err := conv(v)
	if err != nil {
		e.bad = append(e.bad, badEnv{strings.ToLower(strings.ReplaceAll(name, "_", "-")),
			fmt.Errorf("HERMES_EMULATOR_%s: invalid value %q", name, v)})
		return def
	}
	return x
}

func (e *envs) getInt(name string, def int) int { return envParse(e, name, def, strconv.Atoi) }

func (e *envs) getInt64(name string, def int64) int64 {
	return envParse(e, name, def, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
}

func (e *envs) getDur(name string, def time.Duration) time.Duration {
	return envParse(e, name, def, time.ParseDuration)
}

func (e *envs) getBool(name string) bool { return envParse(e, name, false, strconv.ParseBool) }

// origin names where a value came from in an error message: "--<flag>" when
// the flag was given, else the environment variable HERMES_EMULATOR_<name>
// (the flag's default comes from it, or is built in).
func origin(fs *flag.FlagSet, flagName, envName string) string {
	if !flagSet(fs, flagName) && os.Getenv("HERMES_EMULATOR_"+envName) != "" {
		return "HERMES_EMULATOR_" + envName
	}
	return "--" + flagName
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
