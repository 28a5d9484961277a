// Command ddptrainee is the data-parallel program volt's distributed tests
// build with -tags mpi and launch under mpirun: Lightning's DDP golden
// model (a 4 → 1 linear regression, SGD lr 0.1, on the data of
// testdata/data.json) trained with the options the flags
// give. Each rank prints one line "RESULT <json>" (see result) for the
// test to check; the program checks nothing itself.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/metrics"
	"github.com/voltml/volt/optim"
)

// options are the flags.
type options struct {
	dataPath      string
	epochs        int
	maxSteps      int64
	batch         int
	shuffle       bool
	seed          int64
	f64           bool
	union         int
	rankInit      bool
	logSync       bool
	stopAt        string
	failAt        string
	panicAt       string
	slow          time.Duration
	slowValRank   int
	valEvery      time.Duration
	ckptDir       string
	defaultCkpt   string
	profiler      string
	resume        string
	devices       int
	accumulate    int
	earlyStopRank int
	signalAt      string
	handleSignals bool
	metricValues  bool
	nanSample     int
	predict       bool
	out           string
	prepareDir    string
	tbptt         int
	nanAt         string
}

func main() {
	var o options
	flag.StringVar(&o.dataPath, "data", "testdata/data.json", "data and initial weights (gen_ddp_data.py)")
	flag.IntVar(&o.epochs, "epochs", 3, "MaxEpochs")
	flag.Int64Var(&o.maxSteps, "max-steps", 0, "MaxSteps (0: none)")
	flag.IntVar(&o.batch, "batch", 4, "batch size per rank")
	flag.BoolVar(&o.shuffle, "shuffle", false, "shuffle the training loader")
	flag.Int64Var(&o.seed, "seed", -1, "the training loader's seed (-1: none)")
	flag.BoolVar(&o.f64, "f64", false, "train in float64 (Precision 64-true)")
	flag.IntVar(&o.union, "union", 0, "one process reading data.ShardUnion of this many ranks")
	flag.BoolVar(&o.rankInit, "rank-init", false, "initialise rank r's weights as data.json's + 0.25·r (rank 0's must win)")
	flag.BoolVar(&o.logSync, "log-sync", false, "log Lightning's ddp_logging_sync values")
	flag.StringVar(&o.stopAt, "stop-at", "", "rank:epoch:batch where Trainer.Stop is called")
	flag.StringVar(&o.failAt, "fail-at", "", "rank:epoch:batch where OnTrainBatchEnd returns an error")
	flag.StringVar(&o.panicAt, "panic-at", "", "rank:epoch:batch where OnTrainBatchEnd panics")
	flag.DurationVar(&o.slow, "slow", 0, "sleep this long after every training batch")
	flag.IntVar(&o.slowValRank, "slow-val-rank", -1, "this rank sleeps 25ms in OnValidationEnd, so its clock's next Every(d) validation comes later")
	flag.DurationVar(&o.valEvery, "val-every", 0, "ValCheckInterval Every(d) (0: once per epoch)")
	flag.StringVar(&o.ckptDir, "ckpt", "", "ModelCheckpoint directory, RANK replaced by the MPI rank (monitor val_loss_sync, top 1, last)")
	flag.StringVar(&o.defaultCkpt, "root", "", "DefaultRootDir with the default CSV logger and checkpoints")
	flag.StringVar(&o.profiler, "profiler", "", "Config.Profiler")
	flag.StringVar(&o.resume, "resume", "", "resume Fit from this checkpoint")
	flag.IntVar(&o.devices, "devices", 0, "Config.Devices")
	flag.IntVar(&o.accumulate, "accumulate", 1, "AccumulateGradBatches")
	flag.IntVar(&o.earlyStopRank, "early-stop-rank", -1, "EarlyStopping on es_metric, which gets worse on this rank only")
	flag.StringVar(&o.signalAt, "signal-at", "", "rank:epoch:batch where the rank sends itself SIGTERM (HandleSignals on; checkpoint <ckpt>/interrupted.ckpt)")
	flag.BoolVar(&o.handleSignals, "handle-signals", false, "HandleSignals on (checkpoint <ckpt>/interrupted.ckpt); exit with volt.ExitCode after a signal, as a program should")
	flag.BoolVar(&o.metricValues, "metric-values", false, "count the samples with UpdateMetric (train_seen, val_seen) and record Trainer.MetricValue of them and val_mae after Fit")
	flag.IntVar(&o.nanSample, "nan-sample", -1, "make this training sample's first input NaN, with TerminateOnNaN on")
	flag.StringVar(&o.prepareDir, "prepare-dir", "", "a data module whose PrepareData writes DIR/prepared.<rank> and DIR/data, and whose Setup fails without DIR/data")
	flag.BoolVar(&o.predict, "predict", false, "only Predict over the training set and record the predictions")
	flag.IntVar(&o.tbptt, "tbptt", 0, "train the recurrent model of tbptt.go instead, with TruncatedBPTTSteps this")
	flag.StringVar(&o.nanAt, "nan-at", "", "with -tbptt (which turns TerminateOnNaN on): sample:time whose loss-only marker is NaN")
	flag.StringVar(&o.out, "out", "", "write the result to <out>/rank<r>.json instead of stdout")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "ddptrainee:", err)
		os.Exit(volt.ExitCode(err))
	}
}

// golden is data.json.
type golden struct {
	Weight []float64 `json:"weight"`
	Bias   []float64 `json:"bias"`
	Train  xy        `json:"train"`
	Val    xy        `json:"val"`
}

type xy struct{ X, Y [][]float64 }

// dataset returns the examples with the sample index as a second input.
func (d xy) dataset(f64 bool) data.Slice {
	out := make(data.Slice, len(d.X))
	for i := range d.X {
		var x, y any = d.X[i], d.Y[i]
		if !f64 {
			x, y = toF32(d.X[i]), toF32(d.Y[i])
		}
		out[i] = data.Example{Inputs: []data.Field{{Value: x}, {Value: []int32{int32(i)}}}, Labels: []data.Field{{Value: y}}}
	}
	return out
}

func toF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// at is a rank:epoch:batch position.
type at struct{ rank, epoch, batch int }

func parseAt(s string) (*at, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%q: want rank:epoch:batch", s)
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		v[i] = n
	}
	return &at{v[0], v[1], v[2]}, nil
}

func (a *at) is(t *volt.Trainer, batch int) bool {
	return a != nil && a.rank == t.GlobalRank() && a.epoch == t.CurrentEpoch() && a.batch == batch
}

// result is what a rank prints.
type result struct {
	Rank, World, LocalRank, NodeRank int
	IsGlobalZero                     bool
	Env                              map[string]string
	Batches                          map[int][][]int // training sample indices per epoch
	ValBatches                       map[int][][]int
	Steps                            [][]float64 // weights after every step: w..., b
	Weights                          []float64
	WeightBits                       []string // exact bits, hex
	Callback                         map[string]float64
	StepValues                       []map[string]float64 // sync logging: callback metrics at each batch end
	GlobalStep                       int64
	Epoch                            int
	StopReason                       string
	LastCheckpoint                   string
	BestPath                         string
	LogDir                           string
	AllReduces                       int64
	NonFiniteAgreements              int64 // DistributedStats.NonFiniteAgreements
	ValRuns                          int64
	ValAtSteps                       []int64            // the global step of each validation in Fit
	Predictions                      [][]float64        // -predict: each batch's predictions, flat
	MetricValues                     map[string]float64 // -metric-values: Trainer.MetricValue after Fit
	ValSamples                       []float64          // -metric-values: MetricValue of a CatMetric of the validation sample indices
	Err                              string
}

// module is the linear regression; it records into res.
type module struct {
	o            options
	init         *golden
	res          *result
	stop, fail   *at
	panicAt      *at
	signal       *at
	paramsOffset float64
}

func (m *module) forward(s *volt.Step, x *graph.Node) *graph.Node {
	scope := s.Scope().In("layer")
	dt := x.DType()
	w := make([][]float64, 4)
	for i := range w {
		w[i] = []float64{m.init.Weight[i] + m.paramsOffset}
	}
	b := []float64{m.init.Bias[0] + m.paramsOffset}
	var wv, bv any = w, b
	if !m.o.f64 {
		w32 := make([][]float32, 4)
		for i := range w {
			w32[i] = toF32(w[i])
		}
		wv, bv = w32, toF32(b)
	}
	weight := scope.VariableWithValue("weight", wv).NodeValue(x.Graph())
	bias := scope.VariableWithValue("bias", bv).NodeValue(x.Graph())
	_ = dt
	return graph.Add(graph.MatMul(x, weight), graph.Reshape(bias, 1, 1))
}

func (m *module) mse(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
}

// TrainingStep implements volt.Module.
func (m *module) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l, volt.OnStep(true), volt.OnEpoch(true))
	if m.o.metricValues {
		s.UpdateMetric("train_seen", metrics.SumMetric{}, graph.OnesLike(b.Label(0)), nil)
	}
	return l
}

// ValidationStep implements volt.ValidationStepper.
func (m *module) ValidationStep(s *volt.Step, b volt.Batch) {
	preds := m.forward(s, b.Input(0))
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{preds})
	s.Log("val_loss", l)
	s.Log("val_loss_sync", l, volt.SyncDist)
	// A metric object: its states are reduced across ranks before Compute.
	s.LogMetric("val_mae", metrics.MeanAbsoluteError{}, preds, b.Label(0))
	if m.o.metricValues {
		s.UpdateMetric("val_seen", metrics.SumMetric{}, graph.OnesLike(b.Label(0)), nil)
		s.UpdateMetric("val_samples", metrics.CatMetric{}, b.Input(1), nil)
	}
}

// PredictStep implements volt.PredictStepper: the model's output, one row
// per sample.
func (m *module) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.forward(s, b.Input(0))
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *module) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.1)) }

// indices reads the sample indices of a batch (its second input).
func indices(b *data.Batch) []int {
	flat := tensors.MustCopyFlatData[int32](b.Inputs[1])
	out := make([]int, len(flat))
	for i, v := range flat {
		out[i] = int(v)
	}
	return out
}

// OnTrainBatchEnd records the batch and the weights, logs the sync values,
// and stops or fails where the flags say.
func (m *module) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, b *data.Batch, i int) error {
	e := t.CurrentEpoch()
	m.res.Batches[e] = append(m.res.Batches[e], indices(b))
	m.res.Steps = append(m.res.Steps, weights(t))
	if m.o.logSync {
		v := float64((t.GlobalRank() + 1) * (i + 1))
		both := []volt.LogOption{volt.OnStep(true), volt.OnEpoch(true)}
		t.Log("r_nosync", v, both...)
		t.Log("r_nosync_sum", v, append(both, volt.Reduce(volt.Sum))...)
		t.Log("r_sync_mean", v, append(both, volt.SyncDist)...)
		t.Log("r_sync_sum", v, append(both, volt.SyncDist, volt.Reduce(volt.Sum))...)
		t.Log("r_sync_max", v, append(both, volt.SyncDist, volt.Reduce(volt.Max))...)
		m.res.StepValues = append(m.res.StepValues, t.CallbackMetrics())
	}
	if m.stop.is(t, i) {
		t.Stop("ddptrainee: -stop-at")
	}
	if m.fail.is(t, i) {
		return fmt.Errorf("planned failure on rank %d at epoch %d batch %d", t.GlobalRank(), e, i)
	}
	if m.panicAt.is(t, i) {
		panic(fmt.Sprintf("planned panic on rank %d at epoch %d batch %d", t.GlobalRank(), e, i))
	}
	if m.signal.is(t, i) {
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond) // the trainer's signal goroutine records it
	}
	if m.o.slow > 0 {
		time.Sleep(m.o.slow)
	}
	return nil
}

// OnValidationEnd records the step of a validation inside Fit and sleeps
// on -slow-val-rank, after the validation's collective calls: that rank's
// clock restarts later than the others'.
func (m *module) OnValidationEnd(t *volt.Trainer) error {
	if t.State().Stage != volt.RunningSanityCheck {
		m.res.ValAtSteps = append(m.res.ValAtSteps, t.GlobalStep())
	}
	if t.GlobalRank() == m.o.slowValRank {
		time.Sleep(25 * time.Millisecond)
	}
	return nil
}

// OnValidationBatchEnd records the batch and logs the sync values.
func (m *module) OnValidationBatchEnd(t *volt.Trainer, _ *volt.StepOutput, b *data.Batch, i, _ int) error {
	if t.State().Stage == volt.RunningSanityCheck {
		return nil
	}
	e := t.CurrentEpoch()
	m.res.ValBatches[e] = append(m.res.ValBatches[e], indices(b))
	if m.o.logSync {
		v := float64((t.GlobalRank() + 1) * (i + 1))
		t.Log("val_r_nosync", v)
		t.Log("val_r_sync_mean", v, volt.SyncDist)
		t.Log("val_r_sync_sum", v, volt.SyncDist, volt.Reduce(volt.Sum))
	}
	if m.o.earlyStopRank >= 0 {
		v := float64(e)
		if t.GlobalRank() != m.o.earlyStopRank {
			v = -v
		}
		t.Log("es_metric", v)
	}
	return nil
}

// OnFitStart prints this rank's pid (the kill test reads it).
func (m *module) OnFitStart(t *volt.Trainer) error {
	fmt.Printf("PID rank=%d pid=%d\n", t.GlobalRank(), os.Getpid())
	return nil
}

// weights returns the layer's weights and bias.
func weights(t *volt.Trainer) []float64 {
	var out []float64
	for _, name := range []string{"weight", "bias"} {
		v := t.Store().GetVariable("/layer/" + name)
		val := v.MustValue()
		switch flat := val.Value().(type) {
		case [][]float32:
			for _, r := range flat {
				out = append(out, float64(r[0]))
			}
		case [][]float64:
			for _, r := range flat {
				out = append(out, r[0])
			}
		case []float32:
			out = append(out, float64(flat[0]))
		case []float64:
			out = append(out, flat[0])
		}
	}
	return out
}

func run(o options) error {
	if o.tbptt > 0 {
		return runTBPTT(o)
	}
	raw, err := os.ReadFile(o.dataPath)
	if err != nil {
		return err
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		return fmt.Errorf("%s: %w", o.dataPath, err)
	}
	stop, err1 := parseAt(o.stopAt)
	fail, err2 := parseAt(o.failAt)
	pnc, err3 := parseAt(o.panicAt)
	sig, err4 := parseAt(o.signalAt)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return err
	}
	res := &result{Batches: map[int][][]int{}, ValBatches: map[int][][]int{}, Env: map[string]string{}}
	m := &module{o: o, init: &g, res: res, stop: stop, fail: fail, panicAt: pnc, signal: sig}
	cfg := volt.Config{
		MaxEpochs: o.epochs, MaxSteps: o.maxSteps, NumSanityValSteps: volt.Ptr(0),
		DisableLoggers: o.defaultCkpt == "", DefaultRootDir: o.defaultCkpt, DisableModelSummary: true,
		Devices: o.devices, AccumulateGradBatches: o.accumulate, Seed: volt.Ptr(uint64(0)),
		Profiler: o.profiler,
	}
	if o.defaultCkpt == "" {
		cfg.DisableCheckpointing = true
	}
	if o.valEvery > 0 {
		cfg.ValCheckInterval = volt.Every(o.valEvery)
	}
	if sig != nil || o.handleSignals {
		cfg.HandleSignals, cfg.SignalCheckpointPath = true, filepath.Join(o.ckptDir, "interrupted.ckpt")
	}
	if o.f64 {
		cfg.Precision = "64-true"
	}
	if o.nanSample >= 0 {
		g.Train.X[o.nanSample][0] = math.NaN()
		cfg.TerminateOnNaN = true
	}
	var ckpt *callback.ModelCheckpoint
	if o.ckptDir != "" {
		ckpt = callback.NewModelCheckpoint(callback.ModelCheckpointConfig{
			Dirpath: strings.ReplaceAll(o.ckptDir, "RANK", os.Getenv("OMPI_COMM_WORLD_RANK")), Monitor: "val_loss_sync", SaveLast: true, Filename: "{epoch}-{val_loss:.4f}",
		})
		cfg.Callbacks = append(cfg.Callbacks, ckpt)
	}
	if o.earlyStopRank >= 0 {
		es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "es_metric", Mode: "min", Patience: 1})
		cfg.Callbacks = append(cfg.Callbacks, es)
	}
	t, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	defer volt.FinalizeDistributed()
	if o.rankInit {
		m.paramsOffset = 0.25 * float64(t.GlobalRank())
	}
	train := &data.DataLoader{Dataset: g.Train.dataset(o.f64), BatchSize: o.batch, Shuffle: o.shuffle}
	if o.seed >= 0 {
		train.Seed = volt.Ptr(uint64(o.seed))
	}
	var trainLoader data.Loader = train
	val := &data.DataLoader{Dataset: g.Val.dataset(o.f64), BatchSize: o.batch}
	if o.union > 0 {
		trainLoader = &data.ShardUnion{Loader: train, Replicas: o.union}
		val = &data.DataLoader{Dataset: g.Val.dataset(o.f64), BatchSize: o.batch * o.union}
	}
	var opts []volt.RunOption
	if o.resume != "" {
		opts = append(opts, volt.FromCheckpoint(o.resume))
	}
	if o.predict {
		return predict(t, m, g, o)
	}
	var dm volt.DataModule = volt.Loaders{Train: trainLoader, Val: []data.Loader{val}}
	if o.prepareDir != "" {
		dm = preparing{Loaders: dm.(volt.Loaders), dir: o.prepareDir}
	}
	fitErr := t.Fit(context.Background(), m, dm, opts...)
	res.Rank, res.World, res.LocalRank, res.NodeRank, res.IsGlobalZero = t.GlobalRank(), t.WorldSize(), t.LocalRank(), t.NodeRank(), t.IsGlobalZero()
	for _, k := range []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK"} {
		res.Env[k] = os.Getenv(k)
	}
	res.Weights = weights(t)
	for _, w := range res.Weights {
		if o.f64 {
			res.WeightBits = append(res.WeightBits, fmt.Sprintf("%016x", math.Float64bits(w)))
		} else {
			res.WeightBits = append(res.WeightBits, fmt.Sprintf("%08x", math.Float32bits(float32(w))))
		}
	}
	if slices.ContainsFunc(res.Weights, func(w float64) bool { return math.IsNaN(w) || math.IsInf(w, 0) }) {
		res.Weights = nil // JSON has no NaN; WeightBits keeps them
	}
	res.Callback = t.CallbackMetrics()
	if o.metricValues {
		if res.MetricValues, err = metricValues(t, "train_seen", "val_seen", "val_mae"); err != nil {
			return err
		}
		samples, err := t.MetricValue("val_samples")
		if err != nil {
			return err
		}
		res.ValSamples = samples.Data
	}
	res.ValRuns = t.Progress().ValRuns
	res.GlobalStep, res.Epoch = t.GlobalStep(), t.CurrentEpoch()
	res.LastCheckpoint, res.LogDir = t.LastCheckpoint(), t.LogDir()
	res.AllReduces = t.DistributedStats().AllReduces
	if ckpt != nil {
		res.BestPath = ckpt.BestModelPath()
	}
	if fitErr != nil {
		res.Err = fitErr.Error()
	}
	for k, v := range res.Callback {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(res.Callback, k)
		}
	}
	return finish(t, o, res, fitErr)
}

// finish writes res (to <out>/rank<r>.json, else as a RESULT line on
// stdout) and returns what the program exits with: Fit's error, but nil
// after a planned signal.
func finish(t *volt.Trainer, o options, res *result, fitErr error) error {
	res.NonFiniteAgreements = t.DistributedStats().NonFiniteAgreements
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if o.out != "" {
		if err := os.WriteFile(filepath.Join(o.out, fmt.Sprintf("rank%d.json", res.Rank)), line, 0o644); err != nil {
			return err
		}
	} else {
		fmt.Printf("RESULT %s\n", line)
	}
	var nonFinite *volt.NonFiniteError
	var stopped *volt.InterruptedError
	if (errors.As(fitErr, &nonFinite) || errors.As(fitErr, &stopped)) && t.WorldSize() > 1 {
		// Every rank agreed on it (a non-finite value, a signal): wait until all have written their
		// result before any exits with it (mpirun then ends the others).
		if err := t.Group().Barrier(); err != nil {
			return err
		}
	}
	var interrupted *volt.InterruptedError
	if errors.As(fitErr, &interrupted) && !o.handleSignals {
		return nil // a planned signal: the result says where it stopped
	}
	return fitErr
}

// predict runs Predict over the training set and writes each batch's
// predictions as the rank's result.
func predict(t *volt.Trainer, m *module, g golden, o options) error {
	loader := &data.DataLoader{Dataset: g.Train.dataset(o.f64), BatchSize: o.batch}
	preds, err := t.Predict(context.Background(), m, volt.Loaders{Predict: []data.Loader{loader}})
	if err != nil {
		return err
	}
	res := result{Rank: t.GlobalRank(), World: t.WorldSize()}
	for _, p := range preds[0] {
		var flat []float64
		switch v := p.Value().(type) {
		case [][]float32:
			for _, row := range v {
				flat = append(flat, float64(row[0]))
			}
		case [][]float64:
			for _, row := range v {
				flat = append(flat, row[0])
			}
		default:
			return fmt.Errorf("prediction %T, want [][]float32 or [][]float64", v)
		}
		res.Predictions = append(res.Predictions, flat)
	}
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, fmt.Sprintf("rank%d.json", res.Rank)), line, 0o644)
}

// preparing is a data module that downloads in PrepareData and reads the
// download in Setup, as Lightning's examples do: PrepareData records the
// rank that ran it (DIR/prepared.<RANK>), takes a while, then writes
// DIR/data; Setup fails when DIR/data is not there yet.
type preparing struct {
	volt.Loaders
	dir string
}

func (p preparing) PrepareData() error {
	if err := os.WriteFile(filepath.Join(p.dir, "prepared."+os.Getenv("RANK")), nil, 0o644); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	return os.WriteFile(filepath.Join(p.dir, "data"), []byte("downloaded"), 0o644)
}

func (p preparing) Setup(volt.Stage) error {
	if _, err := os.Stat(filepath.Join(p.dir, "data")); err != nil {
		return fmt.Errorf("Setup ran before PrepareData finished: %w", err)
	}
	return nil
}

// metricValues returns Trainer.MetricValue of each name, as a scalar.
func metricValues(t *volt.Trainer, names ...string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, name := range names {
		v, err := t.MetricValue(name)
		if err != nil {
			return nil, err
		}
		if out[name], err = v.Scalar(); err != nil {
			return nil, fmt.Errorf("MetricValue(%q): %w", name, err)
		}
	}
	return out, nil
}
