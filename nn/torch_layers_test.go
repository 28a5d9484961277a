package nn_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	_ "github.com/voltml/volt/internal/convgrad" // the even-kernel input gradient, as volt's engine has it
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/statedict"
)

// layerCase is one case of a torch-written layer golden file
// (layers_gen.py, attention_gen.py).
type layerCase struct {
	Name       string                 `json:"name"`
	Layer      string                 `json:"layer"`
	Args       map[string]any         `json:"args"`
	Input      torchTensor            `json:"input"`
	Params     map[string]torchTensor `json:"params"`
	Upstream   torchTensor            `json:"upstream"`
	Output     torchTensor            `json:"output"`
	GradInput  *torchTensor           `json:"grad_input"`
	GradParams map[string]torchTensor `json:"grad_params"`
	// Memory is a decoder's second input, GradMemory its gradient.
	Memory     *torchTensor `json:"memory"`
	GradMemory *torchTensor `json:"grad_memory"`

	memory *graph.Node // Memory's node, while the graph is built
}

// ints reads an int-list argument, or def.
func (c layerCase) ints(name string, def ...int) []int {
	v, ok := c.Args[name].([]any)
	if !ok {
		return def
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x.(float64))
	}
	return out
}

// int reads an int argument, or def.
func (c layerCase) int(name string, def int) int {
	if v, ok := c.Args[name].(float64); ok {
		return int(v)
	}
	return def
}

// bool reads a bool argument, or def.
func (c layerCase) bool(name string, def bool) bool {
	if v, ok := c.Args[name].(bool); ok {
		return v
	}
	return def
}

// torchLayers builds each golden layer by its torch name, in scope.
var torchLayers = map[string]func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node{
	"Conv2d": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		b := nn.Conv2d(scope, x, c.int("out", 0), c.ints("kernel")...).Stride(c.ints("stride", 1)...).
			Padding(c.ints("padding", 0)...).Dilation(c.ints("dilation", 1)...).Groups(c.int("groups", 1))
		if !c.bool("bias", true) {
			b.NoBias()
		}
		return b.Done()
	},
	"Conv1d": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		return nn.Conv1d(scope, x, c.int("out", 0), c.ints("kernel")[0]).Stride(c.ints("stride", 1)...).
			Padding(c.ints("padding", 0)...).Dilation(c.ints("dilation", 1)...).Groups(c.int("groups", 1)).Done()
	},
	"MaxPool2d": func(c layerCase, _ *model.Scope, x *graph.Node) *graph.Node {
		return nn.MaxPool2d(x, c.ints("kernel")...).Stride(c.ints("stride", c.ints("kernel")...)...).Padding(c.ints("padding", 0)...).Done()
	},
	"AvgPool2d": func(c layerCase, _ *model.Scope, x *graph.Node) *graph.Node {
		return nn.AvgPool2d(x, c.ints("kernel")...).Stride(c.ints("stride", c.ints("kernel")...)...).Padding(c.ints("padding", 0)...).
			CountIncludePad(c.bool("count_include_pad", true)).Done()
	},
	"AdaptiveAvgPool2d": func(c layerCase, _ *model.Scope, x *graph.Node) *graph.Node {
		size := c.ints("size")
		return nn.AdaptiveAvgPool2d(x, size[0], size[1])
	},
	"Linear": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		return nn.TorchLinear(scope, x, c.int("out", 0), c.bool("bias", true))
	},
	"Embedding": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		return nn.Embedding(scope, x, c.int("num", 0), c.int("dim", 0), dtypes.Float32)
	},
	"GroupNorm": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		return nn.GroupNorm(scope, x, c.int("groups", 0))
	},
	"GRU": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		out, _ := nn.GRU(scope, x, c.int("hidden", 0))
		return out
	},
	"ReLU":     func(_ layerCase, _ *model.Scope, x *graph.Node) *graph.Node { return nn.ReLU(x) },
	"GELU":     func(_ layerCase, _ *model.Scope, x *graph.Node) *graph.Node { return nn.GELU(x) },
	"GELUTanh": func(_ layerCase, _ *model.Scope, x *graph.Node) *graph.Node { return nn.GELUTanh(x) },
	"SiLU":     func(_ layerCase, _ *model.Scope, x *graph.Node) *graph.Node { return nn.SiLU(x) },
	"Sigmoid":  func(_ layerCase, _ *model.Scope, x *graph.Node) *graph.Node { return nn.Sigmoid(x) },
	"Tanh":     func(_ layerCase, _ *model.Scope, x *graph.Node) *graph.Node { return nn.Tanh(x) },
	"LeakyReLU": func(c layerCase, _ *model.Scope, x *graph.Node) *graph.Node {
		return nn.LeakyReLU(x, c.Args["slope"].(float64))
	},
	"ELU": func(c layerCase, _ *model.Scope, x *graph.Node) *graph.Node {
		return nn.ELU(x, c.Args["alpha"].(float64))
	},
	"Softmax": func(c layerCase, _ *model.Scope, x *graph.Node) *graph.Node { return nn.Softmax(x, c.int("dim", 0)) },
	"LogSoftmax": func(c layerCase, _ *model.Scope, x *graph.Node) *graph.Node {
		return nn.LogSoftmax(x, c.int("dim", 0))
	},
}

// checkLayerCases runs every case of the golden file at path: the layer
// loads torch's state_dict strictly (so its variable names and shapes are
// torch's), and its output and the gradients with respect to the input
// and every parameter equal torch's within tol. It logs the largest
// differences per layer.
func checkLayerCases(t *testing.T, path string, layers map[string]func(layerCase, *model.Scope, *graph.Node) *graph.Node, tol float64) {
	var golden struct {
		Cases []layerCase `json:"cases"`
	}
	readJSON(t, path, &golden)
	worst := map[string][3]float64{}
	be := backend(t)
	for _, c := range golden.Cases {
		t.Run(c.Name, func(t *testing.T) {
			build := layers[c.Layer]
			if build == nil {
				t.Fatalf("no layer %q", c.Layer)
			}
			sd := statedict.New()
			keys := make([]string, 0, len(c.Params))
			for key, p := range c.Params {
				sd.Set(key, p.tensor())
				keys = append(keys, key)
			}
			sort.Strings(keys)
			var gradKeys []string
			for _, key := range keys {
				if _, ok := c.GradParams[key]; ok {
					gradKeys = append(gradKeys, key)
				}
			}
			rename := func(key string) string { return key }
			if c.bool("strip_l0", false) { // torch.nn.GRU's weight_ih_l0 is nn.GRU's weight_ih
				rename = func(key string) string { return strings.TrimSuffix(key, "_l0") }
			}
			exec, err := model.NewExec(be, model.NewStore(), func(scope *model.Scope, x, memory, r *graph.Node) []*graph.Node {
				scope = scope.In("layer")
				c.memory = memory
				out := func() *graph.Node {
					defer sd.Apply(scope, statedict.Rename(rename))
					return build(c, scope, x)
				}()
				wrt := []*graph.Node{}
				for _, key := range gradKeys {
					v := scope.Store().GetVariable(scope.Scope() + "/" + strings.ReplaceAll(rename(key), ".", "/"))
					if v == nil {
						panic(fmt.Sprintf("no variable %q", key))
					}
					wrt = append(wrt, v.NodeValue(x.Graph()))
				}
				if c.GradInput != nil {
					wrt = append(wrt, x)
				}
				if c.GradMemory != nil {
					wrt = append(wrt, memory)
				}
				objective := graph.ReduceAllSum(graph.Mul(out, r))
				return append([]*graph.Node{out}, graph.Gradient(objective, wrt...)...)
			})
			if err != nil {
				t.Fatal(err)
			}
			memory := tensors.FromScalar(float32(0)) // unused unless the case has one
			if c.Memory != nil {
				memory = c.Memory.tensor()
			}
			outs, err := exec.Call(c.Input.tensor(), memory, c.Upstream.tensor())
			if err != nil {
				t.Fatal(err)
			}
			d := worst[c.Layer]
			d[0] = math.Max(d[0], maxDiff(t, "output", outs[0], c.Output, tol))
			for i, key := range gradKeys {
				d[2] = math.Max(d[2], maxDiff(t, "grad "+key, outs[1+i], c.GradParams[key], tol))
			}
			if c.GradInput != nil {
				d[1] = math.Max(d[1], maxDiff(t, "grad input", outs[1+len(gradKeys)], *c.GradInput, tol))
			}
			if c.GradMemory != nil {
				d[1] = math.Max(d[1], maxDiff(t, "grad memory", outs[len(outs)-1], *c.GradMemory, tol))
			}
			worst[c.Layer] = d
		})
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range worst {
			if !yield(k) {
				return
			}
		}
	})
	for _, layer := range names {
		d := worst[layer]
		t.Logf("%-25s max |Δ| output %.2g, input gradient %.2g, parameter gradients %.2g", layer, d[0], d[1], d[2])
	}
}

// TestTorchLayersAsTorch: Conv1d/Conv2d (stride, padding, dilation,
// groups, bias, even and 7×7 kernels), MaxPool2d, AvgPool2d (padding
// counted or not), AdaptiveAvgPool2d (down and up), TorchLinear,
// Embedding, GroupNorm, the activations and GRU (torch's weight_ih_l0 …
// renamed to nn.GRU's weight_ih …) load torch's state_dicts by torch's keys and
// give torch's outputs and gradients (layers_gen.py's cases) within 1e-5.
func TestTorchLayersAsTorch(t *testing.T) {
	checkLayerCases(t, "testdata/layers.json", torchLayers, 1e-5)
}
