package golower

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/gokernels"
	"github.com/voltml/volt/internal/golower/resnetstep"
)

// resnetStepPairs are the before/after pairs of BenchmarkResNetStepPaired,
// one per change that targets examples/resnet's step.
var resnetStepPairs = []struct {
	name          string
	before, after cnnVariant
}{
	// The stem (9 patch rows, 16 output channels) multiplied with its
	// patches transposed, not its product (shiftPatchesTransposedProduct).
	{"transposed-product", cnnVariant{"before", DefaultRules(), Lowering{NoTransposedProducts: true}, false},
		cnnVariant{"after", DefaultRules(), Lowering{}, false}},
	// The 28×28 16-channel convolutions and their input gradients shifted
	// channels-last (shift_cl.go).
	{"channels-last", cnnVariant{"before", DefaultRules(), Lowering{}, false},
		cnnVariant{"after", DefaultRules(), Lowering{ChannelsLastShifts: true}, false}},
	// internal/gokernels' Transpose, Pad and Slice instead of the
	// backend's own.
	{"copy-kernels", cnnVariant{"before", DefaultRules(), Lowering{}, true},
		cnnVariant{"after", DefaultRules(), Lowering{}, false}},
	// The convolutions and their gradients on oneDNN (gokernels.RunsConv)
	// instead of lowered.
	{"onednn", cnnVariant{"before", DefaultRules(), Lowering{}, false},
		cnnVariant{"after", DefaultRules(), Lowering{ConvKernel: gokernels.RunsConv}, false}},
}

// resnetBatchTensors returns one batch of 64 uniform 28×28 images and
// uniform labels.
func resnetBatchTensors(seed uint64) (images, labels *tensors.Tensor) {
	r := rand.New(rand.NewPCG(seed, 1))
	const batch = 64
	pixels := make([]float32, batch*resnetstep.ImageSize*resnetstep.ImageSize)
	for i := range pixels {
		pixels[i] = r.Float32()
	}
	classes := make([]int32, batch)
	for i := range classes {
		classes[i] = int32(r.IntN(10))
	}
	return tensors.FromFlatDataAndDimensions(pixels, batch, resnetstep.ImageSize, resnetstep.ImageSize, 1),
		tensors.FromFlatDataAndDimensions(classes, batch)
}

// BenchmarkResNetStepPaired times examples/resnet's training step
// (package resnetstep: the same layers, volt's traced Adam) under the two
// wrapper configurations of each pair, alternating one step of each per
// iteration so that both see the same machine load; it reports each one's
// CPU and wall time per step and the after/before ratios.
//
//	GOEXPERIMENT=simd go test ./internal/golower -run '^$' -bench ResNetStepPaired -benchtime 20x -cpu 1
func BenchmarkResNetStepPaired(b *testing.B) {
	for _, pair := range resnetStepPairs {
		b.Run(pair.name, func(b *testing.B) {
			pairedSteps(b, []cnnVariant{pair.before, pair.after},
				func(v cnnVariant) (*model.Exec, error) {
					store := model.NewStore()
					if err := store.SetRNGStateFromSeed(cnnSeed); err != nil {
						return nil, err
					}
					return resnetstep.NewTrainer(WrapWith(gobackend.GetBackend(), v.rules, v.lowering), store, cnnLR)
				},
				func() (images, labels *tensors.Tensor) { return resnetBatchTensors(cnnSeed) })
		})
	}
}
