package batchnorm_test

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/nn"
)

// reference is PyTorch's batch normalization of x [n, 2] over axis 0 in
// float64 with epsilon eps (weight 1, bias 0): y and the gradient of
// sum(y·gy) with respect to x.
func reference(x, gy []float64, eps float64) (y, dx []float64) {
	const c = 2
	n := len(x) / c
	y, dx = make([]float64, len(x)), make([]float64, len(x))
	for f := range c {
		mean, variance := 0.0, 0.0
		for i := range n {
			mean += x[i*c+f]
		}
		mean /= float64(n)
		for i := range n {
			variance += (x[i*c+f] - mean) * (x[i*c+f] - mean)
		}
		variance /= float64(n)
		inv := 1 / math.Sqrt(variance+eps)
		meanGy, meanGyXhat := 0.0, 0.0
		for i := range n {
			xhat := (x[i*c+f] - mean) * inv
			y[i*c+f] = xhat
			meanGy += gy[i*c+f] / float64(n)
			meanGyXhat += gy[i*c+f] * xhat / float64(n)
		}
		for i := range n {
			dx[i*c+f] = inv * (gy[i*c+f] - meanGy - y[i*c+f]*meanGyXhat)
		}
	}
	return y, dx
}

func maxRelDiff(got, want []float64) float64 {
	worst := 0.0
	for i := range want {
		worst = math.Max(worst, math.Abs(got[i]-want[i])/math.Max(math.Abs(want[i]), 1e-300))
	}
	return worst
}

// TestFloat64Epsilon: in float64 the normalization adds epsilon 1e-5 as
// PyTorch's float64 BatchNorm does, not the backend op's float32(1e-5)
// (9.99999974737875e-06), which parts the two by 1e-8 where a variance is
// small beside epsilon (the second feature here, variance 1e-12), in the
// training output, its gradient and the evaluation output.
func TestFloat64Epsilon(t *testing.T) {
	x := []float64{0.5, 1, -1.25, 1 + 1e-6, 2, 1 - 1e-6, 0.75, 1}
	gy := []float64{0.3, -0.2, 0.1, 0.7, -0.4, 0.05, 0.2, -0.6}
	backend, err := engine.Backend("")
	if err != nil {
		t.Fatal(err)
	}
	store := model.NewStore()
	train := model.MustNewExec(backend, store, func(scope *model.Scope, x, gy *graph.Node) []*graph.Node {
		scope.Store().SetTraining(x.Graph(), true)
		y := batchnorm.New(scope, x, 1).Done()
		return []*graph.Node{y, graph.Gradient(graph.ReduceAllSum(graph.Mul(y, gy)), x)[0]}
	})
	outs, err := train.Call(tensors.FromFlatDataAndDimensions(x, 4, 2), tensors.FromFlatDataAndDimensions(gy, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	y, dx := tensors.MustCopyFlatData[float64](outs[0]), tensors.MustCopyFlatData[float64](outs[1])
	wantY, wantDx := reference(x, gy, 1e-5)
	roundedY, _ := reference(x, gy, float64(float32(1e-5)))
	if d := maxRelDiff(y, wantY); d > 1e-13 {
		t.Errorf("training output: relative difference %.3g from epsilon 1e-5's (float32(1e-5)'s: %.3g)", d, maxRelDiff(y, roundedY))
	}
	if d := maxRelDiff(dx, wantDx); d > 1e-12 {
		t.Errorf("input gradient: relative difference %.3g from epsilon 1e-5's", d)
	}
	if d := maxRelDiff(roundedY, wantY); d < 1e-9 {
		t.Fatalf("the case does not tell the two epsilons apart (%.3g)", d)
	}

	// Evaluation with running statistics: mean 0, variance 1e-12.
	for path, values := range map[string][]float64{"/running_mean": {0, 0}, "/running_var": {1, 1e-12}} {
		if err := store.GetVariable(path).SetValue(tensors.FromFlatDataAndDimensions(values, 2)); err != nil {
			t.Fatal(err)
		}
	}
	eval := model.MustNewExec(backend, store, func(scope *model.Scope, x *graph.Node) *graph.Node {
		return batchnorm.New(scope, x, 1).Done()
	})
	got, err := eval.Call(tensors.FromFlatDataAndDimensions(x, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i, v := range tensors.MustCopyFlatData[float64](got[0]) {
		variance := []float64{1, 1e-12}[i%2]
		want := x[i] / math.Sqrt(variance+1e-5)
		worst = math.Max(worst, math.Abs(v-want)/math.Abs(want))
	}
	if worst > 1e-13 {
		t.Errorf("evaluation output: relative difference %.3g from epsilon 1e-5's", worst)
	}
}

// TestIsAffine tells batch normalizations' weights and biases (this
// package's, torch's names; GoMLX's norm.BatchNorm's) from other layers'.
func TestIsAffine(t *testing.T) {
	backend, err := engine.Backend("")
	if err != nil {
		t.Fatal(err)
	}
	store := model.NewStore()
	exec := model.MustNewExec(backend, store, func(scope *model.Scope, x *graph.Node) *graph.Node {
		scope.Store().SetTraining(x.Graph(), true)
		y := batchnorm.New(scope.In("bn1"), x, 1).Done()
		y = nn.TorchLinear(scope.In("fc"), y, 3, true)
		return norm.BatchNorm(scope.In("gomlx"), y, -1).CurrentScope().Done()
	})
	if _, err := exec.Call(tensors.FromFlatDataAndDimensions(make([]float32, 8), 4, 2)); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"/bn1/weight": true, "/bn1/bias": true, "/bn1/running_mean": false, "/bn1/num_batches_tracked": false,
		"/fc/weight": false, "/fc/bias": false,
		"/gomlx/scale": true, "/gomlx/offset": true, "/gomlx/mean": false,
		"/missing/weight": false, "weight": false,
	} {
		if got := batchnorm.IsAffine(store, path); got != want {
			t.Errorf("IsAffine(%q) = %v, want %v", path, got, want)
		}
	}
}
