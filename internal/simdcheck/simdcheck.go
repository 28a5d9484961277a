// Package simdcheck tells the user when a program was built without
// GOEXPERIMENT=simd, which makes GoMLX's Go backend about 12x slower on
// amd64 without any other sign.
//
// A module cannot turn the experiment on for its users: go.mod's godebug
// lines and //go:debug directives set run-time GODEBUG values only (the go
// command rejects "goexperiment" in both), and a go.mod toolchain line
// selects a toolchain, not its experiments. The fix is in the build's
// environment: GOEXPERIMENT=simd per command, or go env -w GOEXPERIMENT=simd
// once for every build of the user.
package simdcheck

import (
	"log/slog"
	"os"
	"strings"
	"sync"
)

// SilenceEnv names the environment variable that silences the warning.
const SilenceEnv = "VOLT_NO_SIMD_WARNING"

// Message is the warning.
const Message = "volt: this program was built without GOEXPERIMENT=simd, so GoMLX's Go backend " +
	"runs without its SIMD kernels (about 12x slower on amd64). Build with GOEXPERIMENT=simd " +
	"(for every build of this user: go env -w GOEXPERIMENT=simd); " +
	"set " + SilenceEnv + "=1 to silence this message"

var (
	missing = BuiltWithoutSIMD
	once    sync.Once
)

// Applies reports whether the warning applies to a run on backend (a GoMLX
// backend configuration, "" for the default) of a program built with or
// without SIMD, and is not silenced.
func Applies(backend string, builtWithout bool) bool {
	name, _, _ := strings.Cut(backend, ":")
	return builtWithout && (name == "" || name == "go") && os.Getenv(SilenceEnv) == ""
}

// WarnOnce logs Message at warning level to log, the first time in the
// process that it applies to a run on backend.
func WarnOnce(log *slog.Logger, backend string) {
	if Applies(backend, missing) {
		once.Do(func() { log.Warn(Message) })
	}
}

// SetBuiltWithoutForTest makes WarnOnce act as in a build with or without
// SIMD, as if it had not warned yet, until restore is called.
func SetBuiltWithoutForTest(without bool) (restore func()) {
	old := missing
	missing, once = without, sync.Once{}
	return func() { missing, once = old, sync.Once{} }
}
