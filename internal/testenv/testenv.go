// Package testenv decides what a test does when a tool it needs (tmux,
// Chromium, MPI) is missing: skip on a developer's machine, fail in CI,
// where .ci/run sets VOLT_REQUIRE_TOOLS=1.
package testenv

import (
	"os"
	"testing"
)

// RequireToolsVar is the environment variable that turns a missing tool
// from a skip into a failure.
const RequireToolsVar = "VOLT_REQUIRE_TOOLS"

// Missing skips t because of what, or fails it when RequireToolsVar, or
// one of the tool's own variables (toolVars, e.g. "VOLT_REQUIRE_MPI"), is
// "1"; install says how to get the tool.
func Missing(t testing.TB, what, install string, toolVars ...string) {
	t.Helper()
	for _, name := range append([]string{RequireToolsVar}, toolVars...) {
		if os.Getenv(name) == "1" {
			t.Fatalf("%s, and %s=1 requires it (%s)", what, name, install)
			return
		}
	}
	t.Skipf("%s; skipping (%s; set %s=1 to fail instead)", what, install, RequireToolsVar)
}

// Required returns the first of RequireToolsVar and toolVars that is "1"
// (the variable that makes a missing tool a failure), or "" when none is:
// for tests that fall back to something weaker than skipping, such as cached
// data in place of the tool's own output.
func Required(toolVars ...string) string {
	for _, name := range append([]string{RequireToolsVar}, toolVars...) {
		if os.Getenv(name) == "1" {
			return name
		}
	}
	return ""
}
