package torchinit

import (
	"math"
	"strings"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// Rule says how Apply initialises one variable.
type Rule struct {
	// Path is the variable's path.
	Path string
	// Dist is "uniform" (U(−Bound, Bound)) or "normal" (N(0, Bound²)).
	Dist string
	// Bound is the uniform bound or the normal standard deviation.
	Bound float64
	// Why names the PyTorch layer whose default it is.
	Why string
}

// Apply gives every variable under scope without a value PyTorch's
// default initialiser for the layer that created it (see the package doc),
// and returns the rules it applied. Call it after the layers are built and
// before the first step runs: `defer torchinit.Apply(scope)` at the top of
// the function that builds them.
func Apply(scope *model.Scope) []Rule {
	store := scope.Store()
	prefix := strings.TrimSuffix(scope.Scope(), "/") + "/"
	var rules []Rule
	for v := range store.IterVariables() {
		if v.HasValue() || !strings.HasPrefix(v.Path(), prefix) || !v.DType().IsFloat() {
			continue
		}
		rule, ok := RuleFor(store, v)
		if !ok {
			continue
		}
		store.VariableWithShape(v.Path(), v.Shape(), Initializer(store, rule))
		rules = append(rules, rule)
	}
	return rules
}

// Initializer returns the variable initializer that draws rule's
// distribution from the store's random state.
func Initializer(store *model.Store, rule Rule) model.VariableInitializer {
	return func(g *graph.Graph, shape shapes.Shape) *graph.Node {
		if rule.Dist == "normal" {
			return graph.MulScalar(store.RandomNormal(g, shape), rule.Bound)
		}
		u := store.RandomUniform(g, shape) // [0, 1)
		return graph.MulScalar(graph.AddScalar(graph.MulScalar(u, 2), -1), rule.Bound)
	}
}

// RuleFor returns PyTorch's initialisation of variable v, created by a
// GoMLX layer, or ok false when v's name is not one Apply knows.
func RuleFor(store *model.Store, v *model.Variable) (rule Rule, ok bool) {
	scope, name := model.SplitPath(v.Path())
	dims := v.Shape().Dimensions
	rule = Rule{Path: v.Path(), Dist: "uniform"}
	switch name {
	case "weights":
		fanIn, ok := weightFanIn(dims, biasSize(store, scope))
		if !ok {
			return rule, false
		}
		rule.Bound, rule.Why = 1/math.Sqrt(float64(fanIn)), layerName(dims)+" weight: kaiming_uniform_(a=√5), bound 1/√fan_in"
	case "biases":
		w := store.GetVariable(model.JoinPath(scope, "weights"))
		if w == nil || len(dims) != 1 {
			return rule, false
		}
		fanIn, ok := weightFanIn(w.Shape().Dimensions, dims[0])
		if !ok {
			return rule, false
		}
		rule.Bound, rule.Why = 1/math.Sqrt(float64(fanIn)), layerName(w.Shape().Dimensions)+" bias: bound 1/√fan_in"
	case "embeddings":
		if len(dims) != 2 {
			return rule, false
		}
		rule.Dist, rule.Bound, rule.Why = "normal", 1, "nn.Embedding weight: N(0, 1)"
	case "inputsW", "recurrentW", "biasesW", "peepholeW":
		// layers/lstm: [directions, 4, hidden, in], [directions, 4, hidden,
		// hidden], [directions, 8, hidden], [directions, 3, hidden].
		if len(dims) < 3 {
			return rule, false
		}
		hidden := dims[2]
		rule.Bound, rule.Why = 1/math.Sqrt(float64(hidden)), "nn.LSTM "+name+": bound 1/√hidden_size"
	case "weight_ih", "weight_hh", "bias_ih", "bias_hh":
		// volt's nn.GRU, PyTorch's tensors: [3·hidden, in], [3·hidden,
		// hidden], [3·hidden].
		if len(dims) < 1 || len(dims) > 2 || dims[0]%3 != 0 || dims[0] == 0 {
			return rule, false
		}
		hidden := dims[0] / 3
		rule.Bound, rule.Why = 1/math.Sqrt(float64(hidden)), "nn.GRU "+name+": bound 1/√hidden_size"
	default:
		return rule, false
	}
	return rule, true
}

// biasSize returns the size of the "biases" variable in scope, 0 if none.
func biasSize(store *model.Store, scope string) int {
	b := store.GetVariable(model.JoinPath(scope, "biases"))
	if b == nil || b.Shape().Rank() != 1 {
		return 0
	}
	return b.Shape().Dimensions[0]
}

// weightFanIn returns PyTorch's fan_in of a GoMLX dense or convolution
// weight: a dense layer's is its input dimension ([in, out], or [out, in]
// when the bias says so); a convolution's the input channels times the
// kernel's spatial size ([spatial..., in, out] channels-last, or [out, in,
// spatial...] channels-first when the bias says so). out, when not 0, is
// the layer's output size (its bias's).
func weightFanIn(dims []int, out int) (int, bool) {
	rank := len(dims)
	switch {
	case rank < 2:
		return 0, false
	case rank == 2:
		if out != 0 && dims[1] != out && dims[0] == out {
			return dims[1], true // DenseLayoutOutputsInput
		}
		return dims[0], true
	}
	fanIn := 1
	if out != 0 && dims[rank-1] != out && dims[0] == out {
		for _, d := range dims[1:] { // channels-first [out, in, spatial...]
			fanIn *= d
		}
		return fanIn, true
	}
	for _, d := range dims[:rank-1] { // channels-last [spatial..., in, out]
		fanIn *= d
	}
	return fanIn, true
}

// layerName is the PyTorch layer of a weight of these dimensions.
func layerName(dims []int) string {
	if len(dims) == 2 {
		return "nn.Linear"
	}
	return "nn.Conv" + string(rune('0'+len(dims)-2)) + "d"
}
