package volt

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// Predictor runs a trained module's PredictStep on inputs held in memory,
// without a Trainer, a loader or a data module: what a Go service needs to
// serve a model trained with volt. LoadPredictor makes one from a
// checkpoint.
//
// Predict takes one value per input of the module's batch (b.Inputs), each
// a *tensors.Tensor or a Go slice tensors.FromAnyValue accepts
// ([][]float32, []int32, …), with the batch on the first axis. It builds the
// same graph Trainer.Predict builds, on the same backend and in the same
// precision, so its outputs equal Trainer.Predict's bitwise on the same
// batches (TestPredictorEqualsTrainerPredict).
//
// A Predictor is safe for concurrent use by many goroutines. Calls run one
// at a time: volt's compiled programs keep per-call state (the argument
// list, the variables' freshness check), so a mutex serialises execution;
// GoMLX's graph.Exec compiles concurrently, and the Go backend pools each
// execution's buffers, but volt's Program around them is not built for
// concurrent runs. On the CPU backend each call uses every core already;
// batch requests (collect several into one call) to serve more.
//
// A program is compiled per distinct set of input shapes (a new batch size
// is a new program). The predictor keeps at most PredictorMaxShapes of them
// (8 by default), evicting the one used least recently; GoMLX's own
// executor cache refuses new shapes once full instead of evicting, so each
// shape here has its own executor.
type Predictor struct {
	path   string
	module PredictStepper
	eng    *engine.Engine
	opts   predictorOptions
	// loaded are the checkpoint's variables; trainable, those of them the
	// module trains (the strict check names the unused ones).
	loaded    map[string]bool
	trainable map[string]bool

	mu       sync.Mutex
	programs map[string]*predictorProgram
	clock    uint64
	stats    PredictorStats
	// inputs are the dtypes of the first call's inputs (or the declared
	// ones): later calls must match them, as every batch of a loader must.
	inputs []dtypes.DType
	closed bool
}

// predictorProgram is the compiled PredictStep for one set of input shapes.
type predictorProgram struct {
	prog    *engine.Program
	lastUse uint64
}

// PredictorStats counts what a predictor's cache did.
type PredictorStats struct {
	// Shapes is the number of compiled programs held now.
	Shapes int
	// Compiles counts the programs compiled (traced) so far.
	Compiles int
	// Evictions counts the programs dropped to keep the cache bounded.
	Evictions int
}

// PredictorOption configures LoadPredictor.
type PredictorOption func(*predictorOptions)

type predictorOptions struct {
	backend   string
	maxShapes int
	keepDType bool
	nonStrict bool
	specs     []InputSpec
}

// InputSpec declares one input of a predictor: its dtype and its shape
// without the batch axis. See PredictorInputs.
type InputSpec struct {
	DType dtypes.DType
	// Dims are the dimensions after the batch axis (nil for a [batch] input).
	Dims []int
}

// PredictorBackend selects the backend as Config.Backend does (empty:
// $GOMLX_BACKEND, else volt's default). Use the backend the trainer used
// to get its predictions bitwise.
func PredictorBackend(config string) PredictorOption {
	return func(o *predictorOptions) { o.backend = config }
}

// PredictorMaxShapes bounds the number of compiled programs (one per
// distinct set of input shapes) the predictor keeps; n must be at least 1.
func PredictorMaxShapes(n int) PredictorOption {
	return func(o *predictorOptions) { o.maxShapes = n }
}

// PredictorKeepDType returns predictions in the dtype the module computes
// them in. By default a bfloat16 or float16 prediction (a model trained in
// "bf16-*" or "16-*" precision) is returned as float32, converted exactly.
func PredictorKeepDType() PredictorOption {
	return func(o *predictorOptions) { o.keepDType = true }
}

// PredictorNonStrict accepts a checkpoint with trainable variables the
// prediction step does not use (as NonStrict does for a run). Variables the
// step uses must always be in the checkpoint.
func PredictorNonStrict() PredictorOption {
	return func(o *predictorOptions) { o.nonStrict = true }
}

// PredictorInputs declares the module's inputs. Predict then checks every
// call against them (count, dtype, dimensions after the batch axis) before
// running anything, and LoadPredictor compiles the step for a batch of one,
// so a checkpoint that does not fit the module is reported when loading.
// Without it the first call sets the number of inputs and their dtypes.
func PredictorInputs(specs ...InputSpec) PredictorOption {
	return func(o *predictorOptions) { o.specs = specs }
}

// LoadPredictor reads the checkpoint at path into m as LoadModule does (the
// hyper-parameters set m's fields, the weights are the checkpoint's) and
// returns a predictor running m's PredictStep with those weights. The
// predictor computes in the precision the checkpoint's weights are in
// (bfloat16 weights: "bf16-true" or "bf16-mixed" training), casting
// floating-point inputs to it as the trainer does.
func LoadPredictor[T any, PT interface {
	*T
	Module
}](path string, m PT, opts ...PredictorOption) (*Predictor, error) {
	o, err := predictorOpts(path, m, opts)
	if err != nil {
		return nil, err
	}
	if _, err := LoadModule(path, m); err != nil {
		return nil, fmt.Errorf("volt.LoadPredictor: %w", err)
	}
	return startPredictor(path, m, attachedTo(m), o)
}

// predictorOpts applies opts and checks them and m's PredictStep.
func predictorOpts(path string, m Module, opts []PredictorOption) (predictorOptions, error) {
	o := predictorOptions{maxShapes: 8}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxShapes < 1 {
		return o, fmt.Errorf("volt.LoadPredictor %s: PredictorMaxShapes(%d): must be at least 1", path, o.maxShapes)
	}
	if _, ok := m.(PredictStepper); !ok {
		return o, fmt.Errorf("volt.LoadPredictor %s: %T has no PredictStep(s *volt.Step, b volt.Batch) *graph.Node", path, m)
	}
	return o, nil
}

// startPredictor returns the predictor of m with the checkpoint's weights
// w, compiled for a batch of one when o declares the inputs.
func startPredictor(path string, m Module, w *moduleWeights, o predictorOptions) (*Predictor, error) {
	backend, err := engine.Backend(o.backend)
	if err != nil {
		return nil, fmt.Errorf("volt.LoadPredictor %s: %w", path, err)
	}
	p, err := newPredictor(path, m, w, backend, o)
	if err != nil {
		return nil, fmt.Errorf("volt.LoadPredictor%w", err)
	}
	if len(o.specs) > 0 {
		p.inputs = make([]dtypes.DType, len(o.specs))
		example := make([]*tensors.Tensor, len(o.specs))
		for i, s := range o.specs {
			p.inputs[i] = s.DType
			example[i] = tensors.FromShape(shapes.Make(s.DType, append([]int{1}, s.Dims...)...))
		}
		if _, err := p.programFor(example); err != nil {
			return nil, fmt.Errorf("volt.LoadPredictor: %w", err)
		}
	}
	return p, nil
}

// newPredictor returns a predictor of m's PredictStep with the weights w
// on backend. Its errors are written to follow "volt.LoadPredictor" (they
// start with " PATH:" or ": checkpoint PATH:", as LoadPredictor's own).
func newPredictor(path string, m Module, w *moduleWeights, backend compute.Backend, o predictorOptions) (*Predictor, error) {
	ps, ok := m.(PredictStepper)
	if !ok {
		return nil, fmt.Errorf(" %s: %T has no PredictStep(s *volt.Step, b volt.Batch) *graph.Node", path, m)
	}
	dtype := weightsDType(w)
	if !backend.Capabilities().DTypes[dtype] {
		return nil, fmt.Errorf(" %s: the weights are %s, which the backend %q does not support", path, dtype, backend.String())
	}
	eng, err := engine.New(backend, dtype, 0)
	if err != nil {
		return nil, fmt.Errorf(" %s: %w", path, err)
	}
	eng.Log = defaultLog() // the logger a trainer's Config.Log defaults to
	p := &Predictor{path: path, module: ps, eng: eng, opts: o, loaded: map[string]bool{}, trainable: map[string]bool{},
		programs: map[string]*predictorProgram{}}
	for _, ct := range w.tensors {
		val, err := ct.ToGoMLX()
		if err == nil {
			var v *model.Variable
			if v, err = eng.Store.CreateVariable(ct.Name, val); err == nil {
				v.SetTrainable(!w.frozen[ct.Name])
			}
		}
		if err != nil {
			return nil, fmt.Errorf(": checkpoint %s: variable %s: %w", path, ct.Name, err)
		}
		p.loaded[ct.Name] = true
		p.trainable[ct.Name] = !w.frozen[ct.Name]
	}
	return p, nil
}

// weightsDType is the dtype the module computes in, read from its weights:
// the half-precision one when there is one (the compute copies of mixed
// precision; its float32 masters are volt's state, not module weights),
// float64 when every floating-point weight is, else float32.
func weightsDType(w *moduleWeights) dtypes.DType {
	seen := map[dtypes.DType]int{}
	floats := 0
	for _, ct := range w.tensors {
		if ct.DType.IsFloat() {
			seen[ct.DType]++
			floats++
		}
	}
	switch {
	case seen[dtypes.BFloat16] > 0:
		return dtypes.BFloat16
	case seen[dtypes.Float16] > 0:
		return dtypes.Float16
	case floats > 0 && seen[dtypes.Float64] == floats:
		return dtypes.Float64
	}
	return dtypes.Float32
}

// Predict runs the module's PredictStep on one batch of inputs and returns
// the prediction (float32 for a half-precision model, unless
// PredictorKeepDType). Each input is a *tensors.Tensor or a Go slice with
// the batch on its first axis; every input must have the same batch size.
func (p *Predictor) Predict(inputs ...any) (*tensors.Tensor, error) {
	ts := make([]*tensors.Tensor, len(inputs))
	for i, in := range inputs {
		switch x := in.(type) {
		case *tensors.Tensor:
			if x == nil {
				return nil, fmt.Errorf("volt.Predictor.Predict: input %d is a nil tensor", i)
			}
			ts[i] = x
		default:
			if err := emptyInput(in); err != nil {
				return nil, fmt.Errorf("volt.Predictor.Predict: input %d (%T) %w", i, in, err)
			}
			t, err := tensors.FromAnyValue(in)
			if err != nil {
				return nil, fmt.Errorf("volt.Predictor.Predict: input %d (%T) is neither a *tensors.Tensor nor a Go slice of numbers: %w", i, in, err)
			}
			ts[i] = t
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("volt.Predictor.Predict: the predictor is closed")
	}
	if err := p.checkInputs(ts); err != nil {
		return nil, fmt.Errorf("volt.Predictor.Predict: %w", err)
	}
	pp, err := p.programFor(ts)
	if err != nil {
		return nil, fmt.Errorf("volt.Predictor.Predict: %w", err)
	}
	outs, _, err := pp.prog.Run(&data.Batch{Inputs: ts, Size: ts[0].Shape().Dimensions[0]})
	if err != nil {
		return nil, fmt.Errorf("volt.Predictor.Predict: %w", err)
	}
	if p.inputs == nil {
		p.inputs = dtypesOf(ts)
	}
	out := outs[0]
	if !p.opts.keepDType && (out.DType() == dtypes.BFloat16 || out.DType() == dtypes.Float16) {
		out = engine.ToFloat32(out)
	}
	return out, nil
}

// emptyInput reports a Go slice input with no example, or whose first
// example is empty along some axis (the dimensions so far), which
// tensors.FromAnyValue cannot give a shape to.
func emptyInput(in any) error {
	v := reflect.ValueOf(in)
	var dims []string
	for v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		dims = append(dims, fmt.Sprintf("[%d]", v.Len()))
		if v.Len() == 0 {
			if len(dims) == 1 {
				return errors.New("is empty: a batch holds one or more examples")
			}
			return fmt.Errorf("has an empty example: %s (every axis after the batch needs one or more values)", strings.Join(dims, ""))
		}
		v = v.Index(0)
	}
	return nil
}

// checkInputs checks a call's inputs against the declared ones, or the
// first call's: their number, batch axis, dtypes and (declared) dimensions.
func (p *Predictor) checkInputs(ts []*tensors.Tensor) error {
	if len(ts) == 0 {
		return errors.New("no inputs; pass one value per input of the module's batch")
	}
	if p.inputs != nil && len(ts) != len(p.inputs) {
		return fmt.Errorf("got %d inputs, the module takes %d (%s)", len(ts), len(p.inputs), p.describeInputs())
	}
	batch := -1
	for i, t := range ts {
		s := t.Shape()
		if s.Rank() == 0 {
			return fmt.Errorf("input %d is a scalar (%s); the first axis of every input is the batch", i, s)
		}
		if batch < 0 {
			batch = s.Dimensions[0]
		} else if s.Dimensions[0] != batch {
			return fmt.Errorf("input %d has batch size %d (shape %s), input 0 has %d; every input has the batch on its first axis", i, s.Dimensions[0], s, batch)
		}
		if p.inputs != nil && s.DType != p.inputs[i] {
			return fmt.Errorf("input %d is %s, expected %s (%s)", i, s.DType, p.inputs[i], p.describeInputs())
		}
		if i < len(p.opts.specs) && !slices.Equal(s.Dimensions[1:], p.opts.specs[i].Dims) {
			return fmt.Errorf("input %d has shape %s, expected [batch %s] (%s)", i, s, dimsText(p.opts.specs[i].Dims), p.describeInputs())
		}
	}
	return nil
}

// describeInputs says what the inputs must be, for errors.
func (p *Predictor) describeInputs() string {
	parts := make([]string, len(p.inputs))
	for i, dt := range p.inputs {
		if i < len(p.opts.specs) {
			parts[i] = fmt.Sprintf("input %d: %s[batch %s]", i, dt, dimsText(p.opts.specs[i].Dims))
		} else {
			parts[i] = fmt.Sprintf("input %d: %s", i, dt)
		}
	}
	how := "as the first call's"
	if len(p.opts.specs) > 0 {
		how = "as declared by PredictorInputs"
	}
	return strings.Join(parts, ", ") + ", " + how
}

func dimsText(dims []int) string {
	var b strings.Builder
	for _, d := range dims {
		fmt.Fprintf(&b, "%d ", d)
	}
	return strings.TrimSpace(b.String())
}

// shapesKey identifies the shapes of ts (dtype and dimensions of each), cheaply.
func shapesKey(ts []*tensors.Tensor) string {
	b := make([]byte, 0, 8*len(ts))
	for _, t := range ts {
		s := t.Shape()
		b = strconv.AppendInt(b, int64(s.DType), 10)
		for _, d := range s.Dimensions {
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(d), 10)
		}
		b = append(b, ';')
	}
	return string(b)
}

// shapesText shows the shapes of ts, for errors.
func shapesText(ts []*tensors.Tensor) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Shape().String()
	}
	return strings.Join(parts, ", ")
}

// programFor returns the compiled step for the shapes of ts, compiling it
// (and evicting the least recently used one when the cache is full).
func (p *Predictor) programFor(ts []*tensors.Tensor) (*predictorProgram, error) {
	key := shapesKey(ts)
	p.clock++
	if pp, ok := p.programs[key]; ok {
		pp.lastUse = p.clock
		return pp, nil
	}
	prog, err := p.eng.Compile("PredictStep", engine.Evaluation, p.graphFn)
	if err != nil {
		return nil, err
	}
	b := &data.Batch{Inputs: ts, Size: ts[0].Shape().Dimensions[0]}
	if err := prog.Compile(b); err != nil {
		prog.Close()
		return nil, fmt.Errorf("checkpoint %s with %T on inputs %s: %w", p.path, p.module, shapesText(ts), err)
	}
	p.stats.Compiles++
	if len(p.programs) >= p.opts.maxShapes {
		oldest := ""
		for k, pp := range p.programs {
			if oldest == "" || pp.lastUse < p.programs[oldest].lastUse {
				oldest = k
			}
		}
		p.programs[oldest].prog.Close()
		delete(p.programs, oldest)
		p.stats.Evictions++
	}
	pp := &predictorProgram{prog: prog, lastUse: p.clock}
	p.programs[key] = pp
	return pp, nil
}

// graphFn is the prediction step as Trainer.Predict traces it
// (predictProgram), followed by the check that the step reads only the
// checkpoint's variables.
func (p *Predictor) graphFn(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
	s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningPredict}
	pred := p.module.PredictStep(s, Batch{Inputs: inputs, Labels: labels})
	if pred == nil {
		panic("PredictStep returned nil")
	}
	var missing, unexpected []string
	for v := range p.eng.Store.IterVariables() {
		if v.InUseByGraph(s.graph) && !p.loaded[v.Path()] {
			missing = append(missing, v.Path())
		}
	}
	if !p.opts.nonStrict {
		for name := range p.loaded {
			if v := p.eng.Store.GetVariable(name); p.trainable[name] && v != nil && !v.InUseByGraph(s.graph) {
				unexpected = append(unexpected, name)
			}
		}
	}
	if len(missing)+len(unexpected) > 0 {
		slices.Sort(missing)
		slices.Sort(unexpected)
		panic(fmt.Errorf("the checkpoint does not match the module's PredictStep: missing variables %q; unexpected variables %q "+
			"(a checkpoint of another model? PredictorNonStrict accepts unused ones)", missing, unexpected))
	}
	return []*graph.Node{pred}
}

// Stats returns what the predictor's cache holds and has done.
func (p *Predictor) Stats() PredictorStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Shapes = len(p.programs)
	return s
}

// Close releases the compiled programs; Predict fails afterwards.
func (p *Predictor) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, pp := range p.programs {
		pp.prog.Close()
		delete(p.programs, k)
	}
	p.closed = true
}
