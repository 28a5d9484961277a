package resnetstep_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/golower"
	"github.com/voltml/volt/internal/golower/resnetstep"
)

// TestTrainerLearnsOneBatch: the step compiles on golower's wrapper, has
// examples/resnet's trainable parameters (a kernel and a batch
// normalization's scale and offset for each of its 9 convolutions, the
// head's weights and biases: 29 variables, 77,754 values), and lowers the
// loss on a repeated batch of 8 from about ln 10.
func TestTrainerLearnsOneBatch(t *testing.T) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(1); err != nil {
		t.Fatal(err)
	}
	exec, err := resnetstep.NewTrainer(golower.Wrap(gobackend.GetBackend()), store, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const batch = 8
	pixels := make([]float32, batch*resnetstep.ImageSize*resnetstep.ImageSize)
	for i := range pixels {
		pixels[i] = rng.Float32()
	}
	labels := make([]int32, batch)
	for i := range labels {
		labels[i] = int32(i % 10)
	}
	images := tensors.FromFlatDataAndDimensions(pixels, batch, resnetstep.ImageSize, resnetstep.ImageSize, 1)
	classes := tensors.FromFlatDataAndDimensions(labels, batch)
	var losses []float32
	for range 10 {
		outs, err := exec.Exec(images, classes)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, tensors.ToScalar[float32](outs[0]))
	}
	if first := float64(losses[0]); math.IsNaN(first) || math.Abs(first-math.Log(10)) > 1 {
		t.Errorf("first loss %g, want about ln 10 = %.3f", first, math.Log(10))
	}
	if last := losses[len(losses)-1]; !(last < losses[0]) {
		t.Errorf("loss went from %g to %g over %d steps on one batch, want lower", losses[0], last, len(losses))
	}
	var vars, values int
	for v := range store.IterVariables() {
		if v.Trainable {
			vars++
			values += v.Shape().Size()
		}
	}
	if vars != 29 || values != 77754 {
		t.Errorf("%d trainable variables of %d values, want examples/resnet's 29 of 77,754", vars, values)
	}
}
