package golower

import (
	"os"
	"testing"

	"github.com/voltml/volt/internal/gokernels"
)

// TestMain runs this package's tests with internal/gokernels off: they
// compare the lowering with the Go backend's own ops, and a graph built
// with the kernels on would leave convolutions to oneDNN instead of
// lowering them. Tests of the kernels' place in the lowering turn them on
// themselves (withKernels).
func TestMain(m *testing.M) {
	gokernels.SetEnabled(false)
	os.Exit(m.Run())
}

// withKernels turns internal/gokernels on for the rest of the test.
func withKernels(t *testing.T) {
	t.Helper()
	if err := gokernels.Installed(); err != nil {
		t.Skipf("internal/gokernels is not installed: %v", err)
	}
	gokernels.SetEnabled(true)
	t.Cleanup(func() { gokernels.SetEnabled(false) })
}
