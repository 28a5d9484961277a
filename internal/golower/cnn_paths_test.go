package golower

import (
	"testing"

	"github.com/gomlx/compute/gobackend"
)

// TestCNNPaths checks which lowering each convolution and pooling of the
// CNN's training step takes with the default rules: both forward
// convolutions lowered with their kernel gradients reusing the patches
// (the first from shifted runs), both input gradients scattered (GoMLX
// builds the first one's, with respect to the images, too), and both
// poolings with their gradients lowered.
func TestCNNPaths(t *testing.T) {
	backend := WrapWith(gobackend.GetBackend(), DefaultRules(), Lowering{}).(*Backend)
	exec, err := cnnTrainer(backend)
	if err != nil {
		t.Fatal(err)
	}
	images, labels := cnnBatchTensors(cnnSeed)
	if _, err := exec.Exec(images, labels); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"lowered convolutions", backend.Lowered(), 6},
		{"shifted", backend.ShiftedConvs(), 1},
		// Its shifted patches (K·C = 9) are fewer rows than its output
		// (Co = 32): not tiled (MinShiftTileRatio).
		{"tiled shifts", backend.TiledShifts(), 0},
		{"reused patches", backend.ReusedPatches(), 2},
		{"scattered", backend.ScatteredConvs(), 2},
		{"lowered poolings", backend.LoweredPools(), 4},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}
