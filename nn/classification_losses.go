package nn

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
)

// CrossEntropyLoss is torch.nn.CrossEntropyLoss: the negative
// log-likelihood of the target classes under softmax(input), with
// torch's options: Weight (per class, [C]), IgnoreIndex (-100), Reduce
// (mean) and LabelSmoothing (0). input holds logits [N, C] or
// [N, C, d1, …] (the class axis second, as in torch); target holds class
// indices, an integer tensor [N] or [N, d1, …]. Class-probability targets
// are not supported. The mean is Σ w[yᵢ]·lossᵢ / Σ w[yᵢ] over the targets
// not ignored (NaN when all are, as in torch); a target outside [0, C)
// that is not IgnoreIndex adds nothing (torch raises).
func CrossEntropyLoss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	c := lossOptions("CrossEntropyLoss", opts, "Reduce", "IgnoreIndex", "LabelSmoothing", "Weight")
	if c.labelSmoothing < 0 || c.labelSmoothing > 1 {
		panic(fmt.Sprintf("nn.CrossEntropyLoss: LabelSmoothing must be in [0, 1], got %v", c.labelSmoothing))
	}
	checkClassShapes("CrossEntropyLoss", input, target)
	return c.negativeLogLikelihood(graph.LogSoftmax(input, 1), target)
}

// NLLLoss is torch.nn.NLLLoss: −input[i, target[i]] (input holds
// log-probabilities, [N, C] or [N, C, d1, …]), with Weight, IgnoreIndex
// and Reduce as CrossEntropyLoss.
func NLLLoss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	c := lossOptions("NLLLoss", opts, "Reduce", "IgnoreIndex", "Weight")
	checkClassShapes("NLLLoss", input, target)
	return c.negativeLogLikelihood(input, target)
}

// checkClassShapes panics, naming loss, unless input is [N, C, d…] and
// target integer [N, d…].
func checkClassShapes(loss string, input, target *graph.Node) {
	id, td := input.Shape().Dimensions, target.Shape().Dimensions
	ok := len(id) >= 2 && len(td) == len(id)-1 && td[0] == id[0] && target.DType().IsInt()
	for i := 2; ok && i < len(id); i++ {
		ok = td[i-1] == id[i]
	}
	if !ok {
		panic(fmt.Sprintf("nn.%s: input must be [N, C] or [N, C, d1, …] and target integer class indices [N] or [N, d1, …]; got input %s and target %s",
			loss, input.Shape(), target.Shape()))
	}
}

// negativeLogLikelihood is torch's nll_loss (with cross_entropy's label
// smoothing) of log-probabilities logp [N, C, d…] and targets [N, d…].
func (c *lossConfig) negativeLogLikelihood(logp, target *graph.Node) *graph.Node {
	classes, dtype := logp.Shape().Dim(1), logp.DType()
	if logp.Rank() > 2 { // the class axis last: [N, d…, C]
		perm := []int{0}
		for i := 2; i < logp.Rank(); i++ {
			perm = append(perm, i)
		}
		logp = graph.TransposeAllAxes(logp, append(perm, 1)...)
	}
	keep := graph.ConvertDType(graph.NotEqual(target, graph.Scalar(target.Graph(), target.DType(), c.ignoreIndex)), dtype)
	oneHot := graph.Mul(graph.OneHot(target, classes, dtype), graph.ExpandAxes(keep, -1)) // zero rows where ignored
	weights := graph.OnesLike(graph.Slice(logp, graph.AxisElem(0)))                       // broadcast to [1, …, C] below
	if c.weight != nil {
		if c.weight.Rank() != 1 || c.weight.Shape().Dim(0) != classes {
			panic(fmt.Sprintf("nn: Weight must be [C] = [%d], one per class, got %s", classes, c.weight.Shape()))
		}
		weights = graph.ConvertDType(c.weight, dtype)
	}
	weights = graph.ExpandLeftToRank(weights, logp.Rank())
	targetWeight := graph.ReduceSum(graph.Mul(oneHot, weights), -1) // w[yᵢ], 0 where ignored
	nll := graph.Neg(graph.ReduceSum(graph.Mul(graph.Mul(oneHot, weights), logp), -1))
	reduce := func(losses *graph.Node) *graph.Node {
		if c.reduction == ReductionMean {
			return graph.Div(graph.ReduceAllSum(losses), graph.ReduceAllSum(targetWeight))
		}
		return c.reduce(losses)
	}
	loss := reduce(nll)
	if c.labelSmoothing == 0 {
		return loss
	}
	smooth := graph.Mul(graph.Neg(graph.ReduceSum(graph.Mul(logp, weights), -1)), keep)
	return graph.Add(graph.MulScalar(loss, 1-c.labelSmoothing), graph.MulScalar(reduce(smooth), c.labelSmoothing/float64(classes)))
}

// BCELoss is torch.nn.BCELoss: −w·(y·log x + (1−y)·log(1−x)) for
// probabilities x (input) and targets y of the same shape, each log
// clamped at −100 as torch does; Weight (broadcast to the input) and
// Reduce.
func BCELoss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	c := lossOptions("BCELoss", opts, "Reduce", "Weight")
	sameShape("BCELoss", input, target)
	y := graph.ConvertDType(target, input.DType())
	logX := graph.MaxScalar(graph.Log(input), -100)
	log1mX := graph.MaxScalar(graph.Log(graph.OneMinus(input)), -100)
	loss := graph.Neg(graph.Add(graph.Mul(y, logX), graph.Mul(graph.OneMinus(y), log1mX)))
	return c.reduce(c.elementWeight(loss))
}

// BCEWithLogitsLoss is torch.nn.BCEWithLogitsLoss: BCELoss of
// sigmoid(input), computed stably from the logits, with Weight, PosWeight
// (per class, the input's last axis) and Reduce.
func BCEWithLogitsLoss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	c := lossOptions("BCEWithLogitsLoss", opts, "Reduce", "Weight", "PosWeight")
	sameShape("BCEWithLogitsLoss", input, target)
	y := graph.ConvertDType(target, input.DType())
	// log(1 + exp(−x)) = max(−x, 0) + log(exp(−max) + exp(−x−max)), torch's form.
	maxVal := graph.MaxScalar(graph.Neg(input), 0)
	softplusNeg := graph.Add(maxVal, graph.Log(graph.Add(graph.Exp(graph.Neg(maxVal)), graph.Exp(graph.Sub(graph.Neg(input), maxVal)))))
	if c.posWeight != nil {
		pw := graph.ConvertDType(c.posWeight, input.DType())
		if pw.Rank() > input.Rank() {
			panic(fmt.Sprintf("nn.BCEWithLogitsLoss: PosWeight %s has more axes than the input %s", pw.Shape(), input.Shape()))
		}
		pw = graph.ExpandLeftToRank(pw, input.Rank())
		softplusNeg = graph.Mul(graph.AddScalar(graph.Mul(graph.AddScalar(pw, -1), y), 1), softplusNeg)
	}
	loss := graph.Add(graph.Mul(graph.OneMinus(y), input), softplusNeg)
	return c.reduce(c.elementWeight(loss))
}

// elementWeight multiplies loss by Weight, broadcast to loss's shape.
func (c *lossConfig) elementWeight(loss *graph.Node) *graph.Node {
	if c.weight == nil {
		return loss
	}
	w := graph.ConvertDType(c.weight, loss.DType())
	if w.Rank() > loss.Rank() {
		panic(fmt.Sprintf("nn: Weight %s has more axes than the input %s", w.Shape(), loss.Shape()))
	}
	return graph.Mul(loss, graph.ExpandLeftToRank(w, loss.Rank()))
}

// KLDivLoss is torch.nn.KLDivLoss: target·(log target − input) for
// log-probabilities input, 0 where target is 0 (or, with LogTarget,
// exp(target)·(target − input)); Reduce takes ReductionBatchMean, the
// true KL divergence, besides torch's default element mean.
func KLDivLoss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	c := lossOptions("KLDivLoss", opts, "Reduce", "LogTarget")
	sameShape("KLDivLoss", input, target)
	t := graph.ConvertDType(target, input.DType())
	var loss *graph.Node
	if c.logTarget {
		loss = graph.Mul(graph.Exp(t), graph.Sub(t, input))
	} else {
		positive := graph.GreaterThan(t, graph.ZerosLike(t))
		safe := graph.Where(positive, t, graph.OnesLike(t)) // log(1) = 0 where target is 0: xlogy
		loss = graph.Sub(graph.Mul(t, graph.Log(safe)), graph.Mul(t, input))
	}
	return c.reduce(loss)
}
