// Package engine is volt's seam to GoMLX: backend selection, precision,
// compiled programs (one per training/evaluation graph), gradients and the
// conversions between host tensors and Go numbers. The loops in package volt
// call it and never build executors themselves.
//
// # The training step
//
// A TrainStep is compiled from the module's part (a ForwardFn: the loss and
// the logged values) and an UpdateSpec per traced graph: Backward builds the
// gradients (dividing the loss by the accumulation factor, held in a
// variable so that a new factor needs no retrace; scaling it for "16-mixed";
// summing into accumulators), then Apply clips, checks, and runs the
// optimizer on the variables or their float32 masters. The trace-time hooks
// (BeforeBackward, AfterBackward, Clip, BeforeOptimizerStep) are closures of
// the spec. By default the whole step is one program. Given a Reducer it is
// two: the gradient program returns the gradients to the host, the Reducer
// sums them over the ranks (the data-parallel all-reduce sits there), and
// the apply program takes them as inputs; both forms give bitwise the same
// weights (TestSplitStepEqualsFusedStep, volt's
// TestSplitStepTrainsLikeFusedStep). The gradient program divides by the
// number of ranks first, in the loss when no hook needs the undivided
// gradients, so the host only sums (in place, on a backend whose buffers
// the host can address: no copy to a host tensor and back).
//
// # Variables as constants (GoMLX v0.28.16, compute v0.1.14)
//
// The pure-Go backend reports Capabilities().PreferConstantsForVariables:
// GoMLX then embeds every variable that already has a value as a constant in
// any graph not marked as training, so that the backend can pack weight
// panels once for its matmuls, and model.Exec keeps reusing that compiled
// graph without feeding the variables again. Two consequences, reproduced
// with GoMLX alone in constants_test.go:
//   - an evaluation graph traced once keeps evaluating the weights it was
//     traced with, however the variables change afterwards;
//   - a graph not marked as training that updates a variable it reads
//     starts from the embedded value on every run (1, 1, 1, not 1, 2, 3).
//
// volt therefore compiles every program in a Mode. Training programs mark
// their graphs as training (which is also what makes GoMLX's dropout drop
// and batch norm update), so variables stay parameters. Evaluation programs
// are marked as not training and record which value each variable had when
// they were traced (at the end of each trace, so that the variables a trace
// creates with a value, as a Validate or Test before any training creates
// the module's, are recorded too); before each run they compare (by tensor
// identity, with weak pointers) and retrace when one changed: once per
// validation run after training steps, never within one.
//
// The alternative, a backend wrapper that reports
// PreferConstantsForVariables = false, does not work by embedding alone:
// the backend's buffers report the inner backend (Buffer.Backend), and
// GoMLX's tensors refuse a buffer of another backend instance, so a wrapper
// must also wrap every buffer and executable. Measured on this 2-core AVX2
// machine with the MNIST MLP (BenchmarkEvalVariables): an evaluation step
// with embedded weights costs the same as with parameters at batch 64
// (0.44 ms) and 17% less at batch 256 (1.07 vs 1.29 ms), and the retrace
// costs 0.6–0.7 ms once per validation run. Retracing is the cheaper and
// the simpler choice.
//
// State that an evaluation step updates (a metric's running counts, say)
// must therefore not live in variables on this backend: each batch would
// retrace. It is a Carry instead: tensors the program takes as extra inputs
// and returns as extra outputs, held by the engine between batches (on the
// Go backend, where the outputs were written: no copy). A slot is created
// while tracing, so the first run of a program that creates one traces once
// more on its second run, with the slot as an input; after that, none
// (TestCarryAccumulatesWithoutRetrace). volt's training steps carry their
// metric state the same way, so that one mechanism serves every step and the
// state never becomes a model variable (trainable, summarised, or loaded
// strictly from a checkpoint).
//
// # One program per input shape
//
// The last, smaller batch of an epoch is traced and compiled as a second
// graph. On the Go backend that costs less than the noise of one step
// (BenchmarkTrainingStepCompile: MLP step 1.7–2.2 ms, trace + compile +
// step 1.9–2.3 ms), so volt does not use GoMLX's dynamic axes, which would
// hand user graph code a batch dimension of -1 wherever it reads
// Shape().Dimensions[0].
//
// # Fused ops in half precision
//
// compute v0.1.2 failed to execute FusedDense in BFloat16 and Float16, so
// volt used to turn GoMLX's fusion off for those graphs; v0.1.14 runs them
// (the bf16/f16 precision tests guard it), and the workaround is gone.
package engine
