// Package onednntest holds what tests outside internal/onednn need to run
// against oneDNN.
package onednntest

import (
	"os"
	"testing"

	"github.com/voltml/volt/internal/onednn"
)

// Require skips t when oneDNN (libdnnl.so.2) cannot be loaded, or fails
// it when VOLT_REQUIRE_ONEDNN=1 (CI installs the library).
func Require(t testing.TB) {
	t.Helper()
	if err := onednn.Available(); err != nil {
		if os.Getenv("VOLT_REQUIRE_ONEDNN") == "1" {
			t.Fatalf("VOLT_REQUIRE_ONEDNN=1 but oneDNN is unavailable: %v", err)
		}
		t.Skipf("oneDNN unavailable: %v", err)
	}
}
