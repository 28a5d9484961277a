package mpitest

import (
	"fmt"
	"testing"
)

// outcome records what missing did to a test instead of ending it: the
// first of Fatalf and Skipf, which would have ended it.
type outcome struct {
	testing.TB
	failed, skipped bool
}

func (o *outcome) Helper()               {}
func (o *outcome) Fatalf(string, ...any) { o.failed = o.failed || !o.skipped }
func (o *outcome) Skipf(string, ...any)  { o.skipped = o.skipped || !o.failed }

// TestMissingMPI: a missing MPI skips, unless VOLT_REQUIRE_MPI=1 or
// VOLT_REQUIRE_TOOLS=1 makes it a failure.
func TestMissingMPI(t *testing.T) {
	for _, c := range []struct {
		requireMPI, requireTools string
		fail                     bool
	}{
		{"", "", false},
		{"1", "", true},
		{"", "1", true},
		{"0", "", false},
	} {
		t.Run(fmt.Sprintf("MPI=%q,tools=%q", c.requireMPI, c.requireTools), func(t *testing.T) {
			t.Setenv(RequireMPIVar, c.requireMPI)
			t.Setenv(RequireToolsVar, c.requireTools)
			o := &outcome{TB: t}
			missing(o, "mpirun is not in PATH")
			if o.failed != c.fail || o.skipped == c.fail {
				t.Errorf("failed %v, skipped %v; want failed %v", o.failed, o.skipped, c.fail)
			}
		})
	}
}
