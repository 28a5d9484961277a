package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
)

// Reduction is how a loss reduces its per-element values: torch's
// reduction argument.
type Reduction int

const (
	// ReductionMean is torch's "mean", every loss's default: the mean of
	// the per-element losses (for CrossEntropyLoss and NLLLoss with
	// weights, the sum divided by the targets' summed weights).
	ReductionMean Reduction = iota
	// ReductionSum is "sum": the sum of the per-element losses.
	ReductionSum
	// ReductionNone is "none": the per-element losses, unreduced.
	ReductionNone
	// ReductionBatchMean is "batchmean", KLDivLoss only: the sum divided by
	// the batch size (input's first dimension), the true KL divergence.
	ReductionBatchMean
)

// String is torch's name of r.
func (r Reduction) String() string {
	switch r {
	case ReductionMean:
		return "mean"
	case ReductionSum:
		return "sum"
	case ReductionNone:
		return "none"
	case ReductionBatchMean:
		return "batchmean"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// LossOption is one of a loss's keyword arguments in torch.
type LossOption func(*lossConfig)

// lossConfig holds a loss's options with torch's defaults, and which were
// given, so a loss refuses one it does not take.
type lossConfig struct {
	reduction      Reduction
	ignoreIndex    int
	labelSmoothing float64
	weight         *graph.Node
	posWeight      *graph.Node
	beta           float64
	logTarget      bool
	given          []string
}

// Reduce is torch's reduction= (ReductionMean by default).
func Reduce(r Reduction) LossOption {
	return func(c *lossConfig) { c.reduction = r; c.given = append(c.given, "Reduce") }
}

// IgnoreIndex is CrossEntropyLoss's and NLLLoss's ignore_index= (-100 by
// default): targets equal to it add nothing to the loss, its gradient or
// the mean's denominator.
func IgnoreIndex(index int) LossOption {
	return func(c *lossConfig) { c.ignoreIndex = index; c.given = append(c.given, "IgnoreIndex") }
}

// LabelSmoothing is CrossEntropyLoss's label_smoothing= in [0, 1] (0 by
// default): the target becomes (1−ε)·one-hot + ε/C.
func LabelSmoothing(epsilon float64) LossOption {
	return func(c *lossConfig) { c.labelSmoothing = epsilon; c.given = append(c.given, "LabelSmoothing") }
}

// Weight is torch's weight=: for CrossEntropyLoss and NLLLoss a rescaling
// of each class, shape [C]; for BCELoss and BCEWithLogitsLoss a rescaling
// of each element, broadcast to the input's shape.
func Weight(w *graph.Node) LossOption {
	return func(c *lossConfig) { c.weight = w; c.given = append(c.given, "Weight") }
}

// PosWeight is BCEWithLogitsLoss's pos_weight=: the weight of the
// positive targets' term, one per class (the input's last axis),
// broadcast as torch does.
func PosWeight(w *graph.Node) LossOption {
	return func(c *lossConfig) { c.posWeight = w; c.given = append(c.given, "PosWeight") }
}

// Beta is SmoothL1Loss's beta= (1 by default, ≥ 0): below it the loss is
// quadratic, above it linear; 0 is L1Loss.
func Beta(beta float64) LossOption {
	return func(c *lossConfig) { c.beta = beta; c.given = append(c.given, "Beta") }
}

// LogTarget is KLDivLoss's log_target=True: the target holds
// log-probabilities.
func LogTarget() LossOption {
	return func(c *lossConfig) { c.logTarget = true; c.given = append(c.given, "LogTarget") }
}

// lossOptions applies opts over torch's defaults, panicking, naming loss,
// when one is not among accepts or the reduction is not one loss takes.
func lossOptions(loss string, opts []LossOption, accepts ...string) *lossConfig {
	c := &lossConfig{reduction: ReductionMean, ignoreIndex: -100, beta: 1}
	for _, opt := range opts {
		opt(c)
	}
	for _, name := range c.given {
		if !slices.Contains(accepts, name) {
			panic(fmt.Sprintf("nn.%s: option %s does not apply; it takes %s", loss, name, strings.Join(accepts, ", ")))
		}
	}
	valid := c.reduction == ReductionMean || c.reduction == ReductionSum || c.reduction == ReductionNone ||
		(c.reduction == ReductionBatchMean && loss == "KLDivLoss")
	if !valid {
		panic(fmt.Sprintf("nn.%s: reduction %s is not valid; use ReductionMean, ReductionSum or ReductionNone%s", loss, c.reduction,
			map[bool]string{true: " or ReductionBatchMean"}[loss == "KLDivLoss"]))
	}
	return c
}

// reduce applies c's reduction to the per-element losses.
func (c *lossConfig) reduce(losses *graph.Node) *graph.Node {
	switch c.reduction {
	case ReductionSum:
		return graph.ReduceAllSum(losses)
	case ReductionNone:
		return losses
	case ReductionBatchMean:
		batch := 1
		if losses.Rank() > 0 {
			batch = losses.Shape().Dim(0)
		}
		return graph.DivScalar(graph.ReduceAllSum(losses), float64(batch))
	}
	return graph.ReduceAllMean(losses)
}

// sameShape panics, naming loss, unless input and target have the same
// dimensions (torch broadcasts some of these with only a warning).
func sameShape(loss string, input, target *graph.Node) {
	if !slices.Equal(input.Shape().Dimensions, target.Shape().Dimensions) {
		panic(fmt.Sprintf("nn.%s: input %v and target %v must have the same shape", loss, input.Shape().Dimensions, target.Shape().Dimensions))
	}
}
