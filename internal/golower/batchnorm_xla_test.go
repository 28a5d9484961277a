//go:build xla

package golower

import (
	"os"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	_ "github.com/gomlx/go-xla/compute/xla"
	"github.com/voltml/volt/internal/bngolden"
)

// XLABackendEnvVar names the XLA backend configuration (e.g.
// "xla:/abs/path/pjrt_c_api_cpu_plugin.so") that TestBatchNormLoweringMatchesXLA
// compares with; unset, the test skips.
const XLABackendEnvVar = "VOLT_XLA_BACKEND"

// TestBatchNormLoweringMatchesXLA: the Go backend's lowered batch
// normalization ops equal XLA's own BatchNormTraining, BatchNormInference
// and BatchNormGrad on the seeded cases, within 1e-5. Build with -tags xla
// and set VOLT_XLA_BACKEND to an XLA backend with a PJRT plugin.
func TestBatchNormLoweringMatchesXLA(t *testing.T) {
	config := os.Getenv(XLABackendEnvVar)
	if config == "" {
		t.Skipf("%s is not set (an XLA backend with a PJRT plugin, e.g. xla:/abs/path/pjrt_c_api_cpu_plugin.so)", XLABackendEnvVar)
	}
	xla, err := compute.NewWithConfig(config)
	if err != nil {
		t.Fatalf("%s=%q: %v", XLABackendEnvVar, config, err)
	}
	lowered := Wrap(gobackend.GetBackend())
	names := []string{"y", "mean", "variance", "inference", "grad_x", "grad_scale", "grad_offset"}
	for i, c := range bnSemanticsCases() {
		t.Run(c.String(), func(t *testing.T) {
			x, scale, offset, dy := c.inputs(uint64(i))
			got := batchNormOutputs(t, lowered, c, false, x, scale, offset, dy)
			x, scale, offset, dy = c.inputs(uint64(i)) // a tensor stays with its backend
			want := batchNormOutputs(t, xla, c, false, x, scale, offset, dy)
			for j := range got {
				if diff, at := bngolden.MaxDiff(t, names[j], got[j], want[j]); diff > 1e-5 {
					t.Errorf("%s: lowered differs from XLA by %.3g at %d (%g vs %g)", names[j], diff, at, got[j][at], want[j][at])
				}
			}
		})
	}
}
