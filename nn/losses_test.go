package nn_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/nn"
)

// lossCase is one case of testdata/losses.json (losses_gen.py).
type lossCase struct {
	Name      string         `json:"name"`
	Loss      string         `json:"loss"`
	Options   map[string]any `json:"options"`
	Input     torchTensor    `json:"input"`
	Target    torchTensor    `json:"target"`
	Weight    *torchTensor   `json:"weight"`
	PosWeight *torchTensor   `json:"pos_weight"`
	Upstream  torchTensor    `json:"upstream"`
	Output    torchTensor    `json:"output"`
	Grad      torchTensor    `json:"grad"`
}

// lossFuncs maps torch.nn.functional's names to nn's losses.
var lossFuncs = map[string]func(input, target *graph.Node, opts ...nn.LossOption) *graph.Node{
	"cross_entropy": nn.CrossEntropyLoss, "nll_loss": nn.NLLLoss, "binary_cross_entropy": nn.BCELoss,
	"binary_cross_entropy_with_logits": nn.BCEWithLogitsLoss, "mse_loss": nn.MSELoss, "l1_loss": nn.L1Loss,
	"smooth_l1_loss": nn.SmoothL1Loss, "kl_div": nn.KLDivLoss,
}

var reductions = map[string]nn.Reduction{"mean": nn.ReductionMean, "sum": nn.ReductionSum, "none": nn.ReductionNone, "batchmean": nn.ReductionBatchMean}

// options are the case's torch keyword arguments as nn's options.
func (c lossCase) options(t *testing.T, g *graph.Graph) []nn.LossOption {
	var opts []nn.LossOption
	for key, v := range c.Options {
		switch key {
		case "reduction":
			opts = append(opts, nn.Reduce(reductions[v.(string)]))
		case "ignore_index":
			opts = append(opts, nn.IgnoreIndex(int(v.(float64))))
		case "label_smoothing":
			opts = append(opts, nn.LabelSmoothing(v.(float64)))
		case "beta":
			opts = append(opts, nn.Beta(v.(float64)))
		case "log_target":
			if v.(bool) {
				opts = append(opts, nn.LogTarget())
			}
		default:
			t.Fatalf("option %q", key)
		}
	}
	if c.Weight != nil {
		opts = append(opts, nn.Weight(graph.Const(g, c.Weight.tensor())))
	}
	if c.PosWeight != nil {
		opts = append(opts, nn.PosWeight(graph.Const(g, c.PosWeight.tensor())))
	}
	return opts
}

// TestLossesAsTorch: every loss, on losses_gen.py's seeded cases (shapes,
// reductions, class weights, ignore_index, label smoothing, pos_weight,
// beta, log_target), gives torch's output and input gradient within
// float32 tolerance; the log lists the largest differences per loss.
func TestLossesAsTorch(t *testing.T) {
	var golden struct {
		Cases []lossCase `json:"cases"`
	}
	readJSON(t, "testdata/losses.json", &golden)
	worst := map[string][2]float64{}
	be := backend(t)
	for _, c := range golden.Cases {
		t.Run(c.Name, func(t *testing.T) {
			fn := lossFuncs[c.Loss]
			if fn == nil {
				t.Fatalf("no loss for %q", c.Loss)
			}
			exec, err := model.NewExec(be, model.NewStore(), func(_ *model.Scope, x, target, r *graph.Node) []*graph.Node {
				out := fn(x, target, c.options(t, x.Graph())...)
				return []*graph.Node{out, graph.Gradient(graph.ReduceAllSum(graph.Mul(out, r)), x)[0]}
			})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := exec.Call(c.Input.tensor(), c.Target.tensor(), c.Upstream.tensor())
			if err != nil {
				t.Fatal(err)
			}
			d := worst[c.Loss]
			d[0] = math.Max(d[0], maxDiff(t, "output", outs[0], c.Output, 1e-5))
			d[1] = math.Max(d[1], maxDiff(t, "grad", outs[1], c.Grad, 1e-5))
			worst[c.Loss] = d
		})
	}
	for loss, d := range worst {
		t.Logf("%-33s max |Δ| output %.2g, input gradient %.2g", loss, d[0], d[1])
	}
}

// TestLossOptionErrors: an option a loss does not take, a reduction it
// does not take and impossible values are refused, naming the loss.
func TestLossOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(x, y, labels *graph.Node)
		want string
	}{
		{"MSE with label smoothing", func(x, y, _ *graph.Node) { nn.MSELoss(x, y, nn.LabelSmoothing(0.1)) },
			"nn.MSELoss: option LabelSmoothing does not apply; it takes Reduce"},
		{"L1 with batchmean", func(x, y, _ *graph.Node) { nn.L1Loss(x, y, nn.Reduce(nn.ReductionBatchMean)) },
			"nn.L1Loss: reduction batchmean is not valid; use ReductionMean, ReductionSum or ReductionNone"},
		{"smoothing above 1", func(x, _, l *graph.Node) { nn.CrossEntropyLoss(x, l, nn.LabelSmoothing(1.5)) },
			"nn.CrossEntropyLoss: LabelSmoothing must be in [0, 1], got 1.5"},
		{"float labels", func(x, y, _ *graph.Node) { nn.CrossEntropyLoss(x, y) },
			"nn.CrossEntropyLoss: input must be [N, C] or [N, C, d1, …] and target integer class indices"},
		{"class weights of the wrong size", func(x, _, l *graph.Node) {
			nn.NLLLoss(x, l, nn.Weight(graph.Const(x.Graph(), []float32{1, 2})))
		}, "nn: Weight must be [C] = [3], one per class"},
		{"negative beta", func(x, y, _ *graph.Node) { nn.SmoothL1Loss(x, y, nn.Beta(-1)) }, "nn.SmoothL1Loss: Beta must be ≥ 0, got -1"},
		{"pos_weight on BCE", func(x, y, _ *graph.Node) { nn.BCELoss(x, y, nn.PosWeight(y)) },
			"nn.BCELoss: option PosWeight does not apply; it takes Reduce, Weight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.NewGraph(backend(t), "shapes")
			x := graph.Parameter(g, "x", shapes.Make(dtypes.Float32, 4, 3))
			y := graph.Parameter(g, "y", shapes.Make(dtypes.Float32, 4, 3))
			labels := graph.Parameter(g, "labels", shapes.Make(dtypes.Int64, 4))
			defer func() {
				r := fmt.Sprint(recover())
				if !strings.Contains(r, tc.want) {
					t.Errorf("panic %q, want %q", r, tc.want)
				}
			}()
			tc.call(x, y, labels)
		})
	}
}

// TestCrossEntropyAllIgnoredIsNaN: with every target ignored the mean is
// 0/0, NaN, as in torch.
func TestCrossEntropyAllIgnoredIsNaN(t *testing.T) {
	exec, err := model.NewExec1(backend(t), model.NewStore(), func(_ *model.Scope, x, y *graph.Node) *graph.Node {
		return nn.CrossEntropyLoss(x, y)
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Call([][]float32{{1, 2}, {3, 4}}, []int64{-100, -100})
	if err != nil {
		t.Fatal(err)
	}
	if v := tensors.MustCopyFlatData[float32](out)[0]; !math.IsNaN(float64(v)) {
		t.Errorf("loss %v, want NaN", v)
	}
}
