package zoo

import (
	"testing"

	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/golower"
)

// TestRecycledGradientsKeepBits: the MLP and the autoencoder trained
// bitsSteps steps on volt's default backend end with the same bits in
// every variable whether the host update's spent gradients go back to the
// Go backend's pool (the default) or are dropped (VOLT_RECYCLE=off), and
// the default recycles: a recycled buffer never holds a value still in use.
func TestRecycledGradientsKeepBits(t *testing.T) {
	for _, name := range []string{"mlp", "autoencoder"} {
		t.Run(name, func(t *testing.T) {
			b, err := engine.Backend("")
			if err != nil {
				t.Fatal(err)
			}
			before := b.(*golower.Backend).Recycled()
			recycled, err := trainedBits(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.(*golower.Backend).Recycled() - before; got == 0 {
				t.Errorf("no gradient buffer was recycled in %d steps", bitsSteps)
			}
			t.Setenv(engine.RecycleEnvVar, "off")
			dropped, err := trainedBits(name)
			if err != nil {
				t.Fatal(err)
			}
			if recycled != dropped {
				t.Errorf("variables after %d steps: %s recycling, %s with %s=off", bitsSteps, recycled, dropped, engine.RecycleEnvVar)
			}
		})
	}
}
