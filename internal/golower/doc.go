// Package golower lowers the ops that GoMLX's pure-Go backend lacks or runs
// slowly onto the ones it runs fast, behind a compute.Backend wrapper (Wrap),
// without changes to the models that use them: convolutions and their
// gradients onto its matmul (lower.go, shift.go, shift_tiles.go,
// shift_cl.go, phases.go, scatter.go, reuse.go), non-overlapping pooling and its gradient onto
// reductions (pool.go, pool_axes.go), batch normalization, which the
// backend lacks, onto reductions and elementwise ops (batchnorm.go,
// bnreuse.go), and matrix products, transposes and the dense layer's
// gradient onto the backend's fast layouts (dot.go, transposes.go,
// dense.go). It also counts, per graph, what a scheduler needs to choose
// how the backend runs it (graph_stats.go; volt's scheduler is
// internal/engine's ops_by_graph.go, beside executors.go), and gives
// buffers their owner is done with back to the backend's pool by way of
// unused donated parameters (recycle.go, Backend.Recycle). It was called
// fastconv while it held convolutions alone.
//
// # Convolutions and pooling
//
// Lowering.ConvGeneral takes the arguments of compute.Function.ConvGeneral
// (any axes layout, strides, paddings, input and kernel dilations, channel
// groups) and emits portable ops instead of the backend's direct
// convolution loop: a Transpose to a channels-last layout, a Pad (interior
// padding for input dilation, negative padding as a crop), one Gather that
// copies the patch (im2col) matrix [N·O, K·C] in contiguous runs, and one
// DotGeneral with the kernel reshaped to [K·C, Co] (with a batch axis per
// channel group). When the patch matrix would pass Lowering.MaxPatchBytes
// (64 MiB by default) the convolution is cut into batch tiles and, one
// example at a time, into bands of output rows, whose results are
// concatenated: memory stays bounded for large images.
//
// Two special cases move fewer bytes. A convolution with unit strides and
// input dilations and no negative padding, whose padded input is at most
// DefaultMaxShiftWaste (1.2) times its output, gathers its patches as
// [K, C, N·P] runs of the channels-first, flattened padded input, one per
// kernel position and channel, and computes on the padded grid, cropped
// afterwards (shift.go): its Gather copies whole images instead of one
// kernel row at a time. An input-dilated convolution (GoMLX's gradient of
// a strided one with respect to its input) is split by output phase into
// unit-dilation convolutions with sub-kernels, interleaved with one
// Transpose (phases.go), instead of multiplying the s^n-times larger patch
// matrix of the dilated input, mostly zeros.
// BenchmarkResNetConvs measured both together at 0.75–0.86× the CPU time
// of the Gather alone. A shifted convolution's batch is cut into
// DefaultShiftSplit (4) blocks of whole images that its products take as
// a batch axis (split.go), so that the matmul's workers do not each pack
// all of the kernel gradient's output gradient (Lowering.ShiftSplit); the
// number is fixed, not the number of cores, so that the bits computed do
// not depend on the machine. A shifted convolution whose patches pass
// DefaultShiftTileBytes (512 KiB) and have at least twice the output's rows
// is gathered and multiplied in tiles of the N·P axis instead
// (shift_tiles.go, Lowering.ShiftTileBytes), so that the matmul packs
// patches still in cache; its kernel gradient gathers each tile again
// rather than keeping the whole patch matrix alive.
// A "full" convolution, padded by at least the kernel's span less one on
// each side (GoMLX's input gradient of a valid stride-1 convolution with
// an odd kernel), is multiplied first and its K shifted products summed
// (scatter.go): one DotGeneral of the kernel [K·Co, C] with the input on
// the output's grid, one Gather of contiguous runs, one ReduceSum.
// BenchmarkCNNPaired measured the CNN's step at 0.94–0.95× the CPU time.
//
// Shifted runs are channels-first; the activations of volt's models are
// channels-last, and the Go backend's 2D Transpose that moves them there
// and back runs element by element. With Lowering.ChannelsLastShifts (off
// by default: faster at one thread, slower at two) a shifted convolution
// of a channels-last input with at least
// DefaultChannelsLastShiftMinChannels (16) channels is computed
// channels-last instead (shift_cl.go): per tile
// of the padded grid, K runs of T·C values, a product batched over the K
// kernel positions and a sum over them, no Transpose (its kernel gradient
// moves the padded input once, in the backward pass); one with fewer
// patch rows K·C than output channels (a first layer on one channel)
// transposes its patches rather than its product (split.go,
// shiftPatchesTransposedProduct). BenchmarkResNetStepPaired and
// BenchmarkCNNPaired compare each with its Lowering switch.
//
// LowerReduceWindowAxes and LowerSelectAndScatterAxes do the same for
// non-overlapping pooling (strides equal to the window, no padding): the
// input is cropped and reduced one windowed axis at a time, each a
// reduction over the middle axis of an [A, w, B] view (pool_axes.go);
// max/min pooling's gradient retraces the levels and gives each window's
// value to its first maximum (the Go backend's SelectAndScatter tie and
// NaN rule), for windows of 2 by comparing the two halves, else with
// ArgMinMax. LowerReduceWindow and LowerSelectAndScatter, one reduction
// over all window axes and ArgMinMax over the transposed windows, are
// kept (Lowering.WholeWindowPooling): BenchmarkPoolPaired measured the
// CNN's two poolings with their gradients at 0.53 and 0.47× their CPU
// time. GoMLX's gradient of sum and mean pooling is an overlapping
// stride-1 ReduceWindow and stays with the backend.
//
// # Batch normalization
//
// The Go backend has no BatchNormForTraining, BatchNormForInference or
// BatchNormGradient; LowerBatchNormForTraining, LowerBatchNormForInference
// and LowerBatchNormGradient (batchnorm.go) emit them as reductions and
// elementwise ops with XLA's semantics, and the wrapper always uses them
// (Rules do not apply). TestBatchNormLoweringMatchesPyTorch compares them
// with PyTorch's BatchNorm1d/2d (testdata/batchnorm). The wrapper keeps
// each BatchNormForTraining's centered operand for the BatchNormGradient
// of the same operand and statistics (bnreuse.go), which also never forms
// x̂: two of its seven elementwise passes fewer. In examples/resnet's
// training step that measured 0.98–1.00× at one thread; alone, on one
// [64, 28, 28, 16] BatchNorm whose operand is a graph parameter,
// BenchmarkBatchNormReuse reads 1.54–1.62× (see its doc).
//
// # Gradients
//
// GoMLX differentiates the graph-level ConvGeneral node, not the lowered
// ops: its VJP builds two more ConvGeneral calls (the input gradient, a
// convolution of the output gradient with the reversed kernel and input
// dilation for strides; the kernel gradient, a convolution with batch and
// channels swapped whose "kernel" is the output gradient). Those reach the
// backend like any other convolution and are lowered too, so forward and
// both gradients run through DotGeneral and no autodiff of Gather is
// involved. The same holds for ReduceWindow and SelectAndScatter.
//
// The kernel gradient's convolution reads the very elements of the forward
// convolution's patch matrix, so the wrapper keeps the patches each
// untiled forward convolution gathers and emits a convolution that
// reverses one of the same input as a single DotGeneral with them, without
// its own transposes, pad and gather (reuse.go; Lowering.NoPatchReuse
// turns it off; the shifted runs of shift.go are reused the same way).
// BenchmarkResNetConvs (examples/resnet's nine convolutions, batch 64,
// forward and both gradients) measured 0.86–0.91× the CPU time without
// it. The patches then live until the backward pass. They are multiplied
// as they are, never reshaped: the Go backend copies a Reshape of a value
// that has other users.
//
// # Matmul layouts and transposes
//
// The wrapper also emits DotGeneral, Transpose and FusedDenseVJP (the
// gradient of layers.Dense) itself, for any model. The Go backend's
// Transpose has fast kernels for a few literal permutations ([0 2 1 3],
// [1 0 2], 2D, trailing axis kept) and moves all others element by element;
// transposes.go reduces a permutation and emits the cheapest plan of those
// kernels (one or two). The backend's DotGeneral transposes both operands
// to [batch, cross, contracting] whenever its matmul does not take them as
// they are; dot.go picks the operand layouts (and whether to swap them)
// whose transposes cost least. dense.go emits FusedDenseVJP as DotGenerals
// and a leading-axes ReduceSum, where the backend's transposes x with an
// untiled loop into a new slice and sums the bias gradient column by
// column. BenchmarkCharGPTStep (examples/chargpt/gpt) measured the three
// together at 0.72–0.73× the CPU time of examples/chargpt's training step
// at one thread, 0.78× at two; Lowering.NoTransposePlans, NoDotLayouts and
// NoDenseVJP turn each off.
//
// # The seam: Wrap
//
// Wrap(backend) returns a compute.Backend whose builders lower
// convolutions and poolings where Rules choose it; everything else is the
// wrapped backend's. The engine calls it once, for the Go backend only
// (XLA has its own convolutions):
//
//	backend = golower.Wrap(backend)
//
// Why a wrapper, and what it must wrap: graph.ConvGeneral calls the
// backend function's ConvGeneral directly. It consults no capability and
// has no fallback decomposition, and GoMLX has no registry for
// graph-level op overrides. The Go backend does have one
// (gobackend.RegisterConvGeneral, with priorities), but it lives in
// github.com/gomlx/compute/internal/gobackend, out of reach of other
// modules. So the seam is a compute.Backend wrapper. GoMLX's tensors
// remember the backend their buffer reports and refuse a buffer of
// another instance, so the wrapper wraps buffers (which report the
// wrapper), executables (which unwrap inputs and wrap outputs), builders
// and functions (which unwrap the closures they hand to Call, While, If
// and Sort). Its cost, from BenchmarkWrapperOverhead on a one-op
// executable: 2 more allocations (56 bytes) per call; the time
// difference is below the noise of the loaded 2-core machine (6.6–21 µs
// per call either way).
//
// # Offering it upstream
//
// The better home is GoMLX's compute module: Lowering.ConvGeneral,
// LowerReduceWindow and LowerSelectAndScatter only call compute.Function
// methods, so inside compute they can be registered as is with
// RegisterConvGeneral, RegisterReduceWindow and
// RegisterSelectAndScatterMax/Min at a priority above the direct loop,
// with Rules deciding when to fall through. Then the wrapper goes away.
//
// # Rules
//
// Rules keep the backend's direct loop where it is faster or where the
// lowering does not apply. Measured with BenchmarkConvRules, the
// defaults are: no lowering below 2048 multiply-adds; none for grouped
// convolutions with fewer than 4 input channels per group (depthwise);
// none for batch grouping, non-float32/float64 dtypes or dynamic shapes.
// See Rules for the figures. Non-overlapping pooling needs no size rule:
// BenchmarkPoolRules (2×2 max-pooling and its gradient, CPU time) finds
// the lowering no slower even at [1,4,4,1] (18 vs 21 µs, the call's fixed
// cost), 5× faster at [1,8,8,4], 25× at [8,16,16,8] and 19× at the CNN's
// [64,26,26,32].
//
// # Adding a lowering
//
// A lowering is a function of the inner compute.Function and the op's
// arguments that emits the op with other ops of that function (see
// LowerBatchNormForInference for a small one); it only calls
// compute.Function methods, so that it could move into GoMLX's compute
// module as is (see "Offering it upstream"). To add one:
//
//  1. Write it in a file of its own, named for the op (say softplus.go),
//     with its doc saying what it emits and why that is faster, and the
//     semantics it keeps (XLA's or the Go backend's, NaNs and ties
//     included).
//  2. Override the op on the wrapper's function (function.go has the
//     others; a new file may hold the override beside the lowering):
//     emit the lowering when it applies and the Rules allow it, else
//     call f.Function's own op, so that any graph still builds. Count it
//     on Backend (an atomic counter and an accessor, as LoweredPools),
//     so that tests and benchmarks can tell that it ran.
//  3. When it is faster only sometimes, add the bound to Rules, measured
//     with a benchmark named in its doc (as BenchmarkConvRules and
//     BenchmarkPoolRules); to compare with and without it, add a
//     No<Name> switch to Lowering.
//  4. Test it against the backend's own op, or PyTorch where the backend
//     has none (testdata/batchnorm), values and gradients
//     (equivalence_test.go, batchnorm_test.go), and time it on a model
//     that uses it (a paired benchmark, as BenchmarkCNNPaired).
//  5. If it emits a matrix product or a convolution, count it in the
//     graph's GraphStats (countDotGeneral, countDense, hasConvolution),
//     which decide whether the graph runs its ops side by side.
//
// The engine wraps every Go backend once (internal/engine's Backend), so
// a lowering reaches every model, volt's and the examples', with no other
// change. VOLT_FASTCONV=off keeps the backend's own convolutions and
// pooling (Rules.Disabled).
package golower
