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

// Missing skips t because of what, or fails it when RequireToolsVar is "1";
// install says how to get the tool.
func Missing(t testing.TB, what, install string) {
	t.Helper()
	if os.Getenv(RequireToolsVar) == "1" {
		t.Fatalf("%s, and %s=1 requires it (%s)", what, RequireToolsVar, install)
	}
	t.Skipf("%s; skipping (%s; set %s=1 to fail instead)", what, install, RequireToolsVar)
}
