package batchnorm_test

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/internal/bngolden"
	"github.com/voltml/volt/internal/engine"
)

// tolerance is the largest difference allowed from PyTorch's float32
// results (absolute up to 1, relative above; see bngolden.MaxDiff).
const tolerance = 1e-5

// layer runs one BatchNorm case of the goldens on a store, in training
// graphs (output, gradients) and an evaluation graph.
type layer struct {
	t     *testing.T
	c     bngolden.Case
	store *model.Store
	train *model.Exec
	eval  *model.Exec
}

func newLayer(t *testing.T, c bngolden.Case, build func(scope *model.Scope, x *graph.Node) *graph.Node) *layer {
	backend, err := engine.Backend("")
	if err != nil {
		t.Fatal(err)
	}
	l := &layer{t: t, c: c, store: model.NewStore()}
	l.train = model.MustNewExec(backend, l.store, func(scope *model.Scope, x, gy *graph.Node) []*graph.Node {
		scope.Store().SetTraining(x.Graph(), true)
		y := build(scope, x)
		wrt := []*graph.Node{x}
		for v := range scope.Store().IterVariables() {
			if v.Trainable {
				wrt = append(wrt, v.NodeValue(x.Graph()))
			}
		}
		grads := graph.Gradient(graph.ReduceAllSum(graph.Mul(y, gy)), wrt...)
		return append([]*graph.Node{y}, grads...)
	})
	l.eval = model.MustNewExec(backend, l.store, func(scope *model.Scope, x *graph.Node) *graph.Node {
		scope.Store().SetTraining(x.Graph(), false)
		return build(scope, x)
	})
	return l
}

func (l *layer) value(name string) []float32 {
	l.t.Helper()
	for v := range l.store.IterVariables() {
		if _, n := model.SplitPath(v.Path()); n == name {
			return tensors.MustCopyFlatData[float32](v.MustValue())
		}
	}
	l.t.Fatalf("no variable %q", name)
	return nil
}

func (l *layer) setValue(name string, values []float32) {
	for v := range l.store.IterVariables() {
		if _, n := model.SplitPath(v.Path()); n == name {
			if err := v.SetValue(tensors.FromValue(values)); err != nil {
				l.t.Fatal(err)
			}
		}
	}
}

func check(t *testing.T, step int, what string, got, want []float32) float64 {
	t.Helper()
	diff, at := bngolden.MaxDiff(t, what, got, want)
	if diff > tolerance {
		t.Errorf("step %d %s: differs from PyTorch by %.3g at %d (got %g, want %g)", step, what, diff, at,
			got[at], want[at])
	}
	return diff
}

// TestMatchesPyTorch: batchnorm.New, trained for three passes and then
// evaluated, gives PyTorch's BatchNorm1d/2d outputs, gradients (input,
// weight, bias), running mean and variance (unbiased, with momentum 0.1,
// 0.3 and None) and num_batches_tracked, within tolerance, on
// testdata/batchnorm's goldens.
func TestMatchesPyTorch(t *testing.T) {
	for _, c := range bngolden.Load(t) {
		t.Run(c.Name, func(t *testing.T) {
			l := newLayer(t, c, func(scope *model.Scope, x *graph.Node) *graph.Node {
				b := batchnorm.New(scope.In("bn"), x, c.FeatureAxis).Epsilon(c.Eps).Affine(c.Affine)
				if c.Momentum == nil {
					b = b.CumulativeAverage()
				} else {
					b = b.Momentum(*c.Momentum)
				}
				return b.Done()
			})
			worst := 0.0
			for i, step := range c.Steps {
				outs := l.train.MustCall(tensors.FromFlatDataAndDimensions(step.X, c.Shape...),
					tensors.FromFlatDataAndDimensions(step.GradY, c.Shape...))
				if i == 0 && c.Affine { // the variables exist after the first trace
					l.setValue("weight", c.Weight)
					l.setValue("bias", c.Bias)
					outs = l.rerunFirst(step)
				}
				got := [][]float32{tensors.MustCopyFlatData[float32](outs[0]), tensors.MustCopyFlatData[float32](outs[1]),
					l.value("running_mean"), l.value("running_var")}
				want := [][]float32{step.Y, step.GradX, step.RunningMean, step.RunningVar}
				names := []string{"y", "grad_x", "running_mean", "running_var"}
				if c.Affine {
					got = append(got, tensors.MustCopyFlatData[float32](outs[2]), tensors.MustCopyFlatData[float32](outs[3]))
					want, names = append(want, step.GradWeight, step.GradBias), append(names, "grad_weight", "grad_bias")
				}
				for j := range got {
					worst = math.Max(worst, check(t, i, names[j], got[j], want[j]))
				}
				if tracked := l.count(); tracked != step.NumBatchesTracked {
					t.Errorf("step %d: num_batches_tracked %d, want %d", i, tracked, step.NumBatchesTracked)
				}
			}
			y := l.eval.MustCall(tensors.FromFlatDataAndDimensions(c.Eval.X, c.Shape...))[0]
			worst = math.Max(worst, check(t, -1, "eval y", tensors.MustCopyFlatData[float32](y), c.Eval.Y))
			t.Logf("max difference from PyTorch: %.3g", worst)
		})
	}
}

// rerunFirst undoes the first pass's running-statistics update (it ran
// with the initial weights, before the golden ones were set) and reruns it.
func (l *layer) rerunFirst(step bngolden.Step) []*tensors.Tensor {
	features := l.c.Shape[l.c.FeatureAxis]
	l.setValue("running_mean", make([]float32, features))
	ones := make([]float32, features)
	for i := range ones {
		ones[i] = 1
	}
	l.setValue("running_var", ones)
	for v := range l.store.IterVariables() {
		if _, n := model.SplitPath(v.Path()); n == "num_batches_tracked" {
			if err := v.SetValue(tensors.FromValue(int64(0))); err != nil {
				l.t.Fatal(err)
			}
		}
	}
	return l.train.MustCall(tensors.FromFlatDataAndDimensions(step.X, l.c.Shape...),
		tensors.FromFlatDataAndDimensions(step.GradY, l.c.Shape...))
}

func (l *layer) count() int64 {
	for v := range l.store.IterVariables() {
		if _, n := model.SplitPath(v.Path()); n == "num_batches_tracked" {
			return tensors.ToScalar[int64](v.MustValue())
		}
	}
	l.t.Fatal("no num_batches_tracked variable")
	return 0
}

// TestGoMLXBatchNormIsNotPyTorchs documents why package batchnorm exists:
// GoMLX's layers/norm.BatchNorm, set to PyTorch's momentum (0.9 in its
// convention) and epsilon, runs on volt's default backend and normalises a
// training batch as PyTorch does, but its running variance after the
// first pass is the batch's biased variance (debiased average, no n/(n-1)),
// not PyTorch's 0.9·1 + 0.1·unbiased.
func TestGoMLXBatchNormIsNotPyTorchs(t *testing.T) {
	c := bngolden.Load(t)[0] // bn1d, momentum 0.1
	l := newLayer(t, c, func(scope *model.Scope, x *graph.Node) *graph.Node {
		return norm.BatchNorm(scope, x, c.FeatureAxis).Momentum(0.9).Epsilon(c.Eps).Done()
	})
	step := c.Steps[0]
	l.train.MustCall(tensors.FromFlatDataAndDimensions(step.X, c.Shape...), // creates the variables
		tensors.FromFlatDataAndDimensions(step.GradY, c.Shape...))
	l.setValue("scale", c.Weight)
	l.setValue("offset", c.Bias)
	l.setValue("avg_weight", make([]float32, len(c.Weight)))
	l.setValue("mean", make([]float32, len(c.Weight)))
	outs := l.train.MustCall(tensors.FromFlatDataAndDimensions(step.X, c.Shape...),
		tensors.FromFlatDataAndDimensions(step.GradY, c.Shape...))
	check(t, 0, "GoMLX y", tensors.MustCopyFlatData[float32](outs[0]), step.Y)
	check(t, 0, "GoMLX grad_x", tensors.MustCopyFlatData[float32](outs[1]), step.GradX)
	got := l.value("variance")
	if diff, _ := bngolden.MaxDiff(t, "variance", got, step.RunningVar); diff < 0.1 {
		t.Errorf("GoMLX's running variance %v is PyTorch's %v: if GoMLX now follows PyTorch, say so in the "+
			"package doc", got, step.RunningVar)
	}
	check(t, 0, "GoMLX running variance vs batch variance", got, step.BatchVar)
}
