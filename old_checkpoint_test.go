package volt_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/metrics"
	"github.com/voltml/volt/optim"
)

// The checkpoints in testdata/checkpoints were written by volt at commit
// 246da32 (before the trainer's state became parts that save and load
// themselves), by oldCkptRun below; see testdata/checkpoints/README.md.
// TestOldCheckpointsResume resumes each with today's volt: the bytes an
// earlier volt wrote must keep resuming exactly as a run that never
// stopped.

// oldCkptDir holds the checkpoints an earlier volt wrote.
const oldCkptDir = "testdata/checkpoints"

// oldCkptPoint is one checkpoint of the fixture run: saved by oldCkptSaver
// when the run is at when ("batch", "validation", "epoch") after training
// batch atBatch (counted over the run).
type oldCkptPoint struct {
	file    string
	when    string
	atBatch int64
}

// oldCkptPoints are the fixture's checkpoints: in OnTrainBatchEnd of a
// batch that stepped (its step row due), of one inside an accumulation
// window, at the end of the mid-epoch validation (which waited for the
// window's end), and in OnTrainEpochEnd (before the epoch's row).
var oldCkptPoints = []oldCkptPoint{
	{"batch-12.ckpt", "batch", 12},
	{"batch-13.ckpt", "batch", 13},
	{"validation-6.ckpt", "validation", 6},
	{"epoch-10.ckpt", "epoch", 10},
}

// oldCkptModule is the boring model trained with Adam, a step-interval
// StepLR and mixed precision, logging its loss per step and per epoch and
// a metric object (MSE), with hyperparameters: every part of a trainer
// state has something to save.
type oldCkptModule struct{ boring }

func (m *oldCkptModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	pred := m.Forward(s, b.Input(0))
	l := graph.ReduceAllMean(graph.Square(graph.Sub(pred, b.Label(0))))
	s.Log("loss", l, volt.OnStep(true), volt.OnEpoch(true), volt.ProgBar)
	s.LogMetric("train_mse", metrics.MeanSquaredError{}, pred, b.Label(0), volt.OnStep(true), volt.OnEpoch(true))
	return l
}

func (m *oldCkptModule) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{{Optimizer: optim.Adam(0.01), Scheduler: optim.NewStepLR(3, 0.7), Interval: volt.IntervalStep}}
}

func (m *oldCkptModule) HParams() map[string]any { return map[string]any{"lr": 0.01, "hidden": 1} }

// oldCkptData trains on a stream that declares its position (so a
// checkpoint holds it) and counts its loads, its state.
type oldCkptData struct {
	stream *statefulStream
	loads  int
}

func newOldCkptData() *oldCkptData {
	return &oldCkptData{stream: &statefulStream{indexStream{n: 40}}}
}

func (d *oldCkptData) TrainDataloader() data.Loader {
	d.loads++
	return &data.DataLoader{Iterable: d.stream, BatchSize: 4}
}

func (d *oldCkptData) ValDataloaders() []data.Loader {
	return []data.Loader{&data.DataLoader{Dataset: regression(16, 2), BatchSize: 8}}
}

func (d *oldCkptData) State() ([]byte, error) { return json.Marshal(map[string]int{"loads": d.loads}) }

func (d *oldCkptData) LoadState(b []byte) error {
	var s map[string]int
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	d.loads = s["loads"]
	return nil
}

func (d *oldCkptData) HParams() map[string]any { return map[string]any{"batch_size": 4} }

// oldCkptCounter is a Stateful callback counting the training batches.
type oldCkptCounter struct{ batches int }

func (c *oldCkptCounter) StateKey() string { return "old-ckpt-counter" }
func (c *oldCkptCounter) State() ([]byte, error) {
	return json.Marshal(map[string]int{"batches": c.batches})
}
func (c *oldCkptCounter) LoadState(b []byte) error {
	var s map[string]int
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	c.batches = s["batches"]
	return nil
}
func (c *oldCkptCounter) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	c.batches++
	return nil
}

// oldCkptSaver saves the fixture's checkpoints into dir, recording how
// many rows mem held at each.
type oldCkptSaver struct {
	dir   string
	mem   *memLogger
	marks map[string]int
}

func (s *oldCkptSaver) save(t *volt.Trainer, when string) error {
	for _, p := range oldCkptPoints {
		if p.when != when || t.Progress().TrainBatch.Total.Processed != p.atBatch {
			continue
		}
		if _, done := s.marks[p.file]; done {
			continue
		}
		s.marks[p.file] = len(s.mem.rows)
		if err := t.SaveCheckpoint(filepath.Join(s.dir, p.file), false); err != nil {
			return err
		}
	}
	return nil
}

func (s *oldCkptSaver) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	return s.save(t, "batch")
}
func (s *oldCkptSaver) OnValidationEnd(t *volt.Trainer) error { return s.save(t, "validation") }
func (s *oldCkptSaver) OnTrainEpochEnd(t *volt.Trainer) error { return s.save(t, "epoch") }

// oldCkptConfig is the fixture run's configuration; its CSV logger writes
// under logs/ of the working directory (relative paths, so that the
// checkpoints' logger positions hold in any copy of the directory).
func oldCkptConfig(t *testing.T, mem *memLogger, callbacks ...volt.Callback) volt.Config {
	t.Helper()
	csv, err := logger.NewCSV(logger.CSVConfig{SaveDir: "logs"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := quiet(volt.Config{MaxEpochs: 3, AccumulateGradBatches: 2, LogEveryNSteps: 2, ValCheckInterval: volt.Batches(5),
		Precision: "16-mixed", DisableCheckpointing: true})
	cfg.DisableLoggers, cfg.Loggers = false, []logger.Logger{csv, mem}
	// The counter first: it has counted a batch when a checkpoint is taken
	// in the batch's OnTrainBatchEnd.
	cfg.Callbacks = append([]volt.Callback{&oldCkptCounter{}}, callbacks...)
	return cfg
}

// oldCkptResult is what a fixture run leaves.
type oldCkptResult struct {
	tr      *volt.Trainer
	mem     *memLogger
	counter *oldCkptCounter
	data    *oldCkptData
	marks   map[string]int // rows logged before each checkpoint
}

// oldCkptRun runs the fixture's Fit to its end in the working directory,
// saving its checkpoints into dir.
func oldCkptRun(t *testing.T, dir string) oldCkptResult {
	t.Helper()
	r := oldCkptResult{mem: &memLogger{}, data: newOldCkptData(), marks: map[string]int{}}
	cfg := oldCkptConfig(t, r.mem, &oldCkptSaver{dir: dir, mem: r.mem, marks: r.marks})
	r.counter = cfg.Callbacks[0].(*oldCkptCounter)
	var err error
	if r.tr, err = volt.NewTrainer(cfg); err != nil {
		t.Fatal(err)
	}
	if err := r.tr.Fit(t.Context(), &oldCkptModule{}, r.data); err != nil {
		t.Fatal(err)
	}
	for _, p := range oldCkptPoints {
		if _, ok := r.marks[p.file]; !ok {
			t.Fatalf("the fixture run never reached %s (%s after batch %d)", p.file, p.when, p.atBatch)
		}
	}
	return r
}

// TestWriteOldCheckpointFixtures writes the fixture's checkpoints and logs
// into $VOLT_WRITE_OLD_CHECKPOINTS; it was run once, at commit 246da32, to
// fill testdata/checkpoints. Do not run it to replace them: their point is
// that an earlier volt wrote them.
func TestWriteOldCheckpointFixtures(t *testing.T) {
	out := os.Getenv("VOLT_WRITE_OLD_CHECKPOINTS")
	if out == "" {
		t.Skip("VOLT_WRITE_OLD_CHECKPOINTS is not set")
	}
	out, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(out)
	oldCkptRun(t, ".")
}

// TestOldCheckpointsResume resumes each checkpoint an earlier volt wrote
// (with the logs directory its run left) and compares the resumed run with
// one that never stopped: the same state in the checkpoint the run takes
// at the same point today, the same final weights, counters, callback and
// data module state, logged values, and rows after the save point in the
// in-memory and CSV loggers. Where this machine's arithmetic does not
// reproduce the fixture's weights bitwise (another CPU), values are
// compared within a tolerance instead.
func TestOldCheckpointsResume(t *testing.T) {
	fixtures, err := filepath.Abs(oldCkptDir)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	full := filepath.Join(root, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(full)
	u := oldCkptRun(t, full)
	fullCSV := readFile(t, filepath.Join(full, "logs", "volt_logs", "version_0", logger.MetricsFileName))
	for _, p := range oldCkptPoints {
		t.Run(p.file, func(t *testing.T) {
			dir := filepath.Join(root, p.file+".resume")
			if err := os.CopyFS(dir, os.DirFS(fixtures)); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			old, now := readCheckpoint(t, p.file), readCheckpoint(t, filepath.Join(full, p.file))
			bitwise := sameTensors(old, now)
			if !bitwise {
				t.Logf("%s: this machine does not reproduce the fixture's tensors bitwise; comparing within a tolerance", p.file)
			}
			compareStates(t, old.State, now.State, bitwise)

			r := oldCkptResult{mem: &memLogger{}, data: newOldCkptData()}
			cfg := oldCkptConfig(t, r.mem)
			r.counter = cfg.Callbacks[0].(*oldCkptCounter)
			if r.tr, err = volt.NewTrainer(cfg); err != nil {
				t.Fatal(err)
			}
			if err := r.tr.Fit(t.Context(), &oldCkptModule{}, r.data, volt.FromCheckpoint(p.file)); err != nil {
				t.Fatal(err)
			}
			if r.tr.GlobalStep() != u.tr.GlobalStep() || r.tr.CurrentEpoch() != u.tr.CurrentEpoch() ||
				!reflect.DeepEqual(r.tr.Progress(), u.tr.Progress()) {
				t.Errorf("resumed run ends at %+v, uninterrupted at %+v", r.tr.Progress(), u.tr.Progress())
			}
			// The data module counts the resumed Fit's own load of the
			// training loader after the checkpoint's.
			if r.counter.batches != u.counter.batches || r.data.loads != u.data.loads+1 {
				t.Errorf("callback and data module state: resumed %d batches, %d loads; uninterrupted %d, %d (+1 for the resumed Fit's load)",
					r.counter.batches, r.data.loads, u.counter.batches, u.data.loads)
			}
			if r.data.stream.yielded >= u.data.stream.yielded {
				t.Errorf("the resumed stream yielded %d examples, the uninterrupted %d: it replayed the epoch instead of resuming at the saved position",
					r.data.stream.yielded, u.data.stream.yielded)
			}
			if bitwise && !equalWeights(weights(t, u.tr), weights(t, r.tr)) {
				t.Error("weights differ from the uninterrupted run's")
			} else if !bitwise && !closeWeights(t, u.tr, r.tr) {
				t.Error("weights are not within tolerance of the uninterrupted run's")
			}
			if !closeMaps(r.tr.LoggedMetrics(), u.tr.LoggedMetrics(), bitwise) || !closeMaps(r.tr.CallbackMetrics(), u.tr.CallbackMetrics(), bitwise) {
				t.Errorf("final metrics differ:\n uninterrupted %v %v\n resumed       %v %v",
					u.tr.LoggedMetrics(), u.tr.CallbackMetrics(), r.tr.LoggedMetrics(), r.tr.CallbackMetrics())
			}
			// The in-memory logger is not resumable: it gets the rows
			// after the save point (the saved step's row, when still due,
			// first).
			rest, steps := u.mem.rows[u.marks[p.file]:], u.mem.steps[u.marks[p.file]:]
			if len(rest) != len(r.mem.rows) || !slices.Equal(steps, r.mem.steps) {
				t.Fatalf("rows after the save point: uninterrupted at steps %v, resumed at %v", steps, r.mem.steps)
			}
			for i := range rest {
				if !closeMaps(rest[i], r.mem.rows[i], bitwise) {
					t.Errorf("row %d after the save point:\n uninterrupted %v\n resumed       %v", i, rest[i], r.mem.rows[i])
				}
			}
			// The CSV logger continues the files of the run that wrote the
			// checkpoint: they end as the uninterrupted run's.
			csv := readFile(t, filepath.Join(dir, "logs", "volt_logs", "version_0", logger.MetricsFileName))
			if bitwise && csv != fullCSV {
				t.Errorf("metrics.csv of the resumed run:\n%s\nof the uninterrupted run:\n%s", csv, fullCSV)
			}
			if _, err := os.Stat(filepath.Join(dir, "logs", "volt_logs", "version_1")); err == nil {
				t.Error("the resumed run logged into a new version directory instead of continuing version_0")
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readCheckpoint(t *testing.T, path string) *checkpoint.File {
	t.Helper()
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sameTensors reports whether two checkpoints hold the same tensors,
// bitwise, in the same order.
func sameTensors(a, b *checkpoint.File) bool {
	if len(a.Tensors) != len(b.Tensors) {
		return false
	}
	for i := range a.Tensors {
		x, y := a.Tensors[i], b.Tensors[i]
		if x.Name != y.Name || x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) || string(x.Data) != string(y.Data) {
			return false
		}
	}
	return true
}

// compareStates checks that the trainer state today's volt writes at a
// point holds the members of the one the earlier volt wrote, with the same
// values (numbers within a tolerance unless bitwise).
func compareStates(t *testing.T, old, now json.RawMessage, bitwise bool) {
	t.Helper()
	var o, n map[string]any
	if err := json.Unmarshal(old, &o); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(now, &n); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(o)), slices.Sorted(maps.Keys(n))) {
		t.Errorf("trainer state members: the earlier volt wrote %v, today's writes %v", slices.Sorted(maps.Keys(o)), slices.Sorted(maps.Keys(n)))
	}
	for k, ov := range o {
		if !closeJSON(ov, n[k], bitwise) {
			t.Errorf("trainer state member %q: the earlier volt wrote %v, today's writes %v", k, ov, n[k])
		}
	}
}

// closeJSON compares decoded JSON values, numbers within a tolerance
// unless exact.
func closeJSON(a, b any, exact bool) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && closeFloat(x, y, exact)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !closeJSON(v, y[k], exact) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !closeJSON(x[i], y[i], exact) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b) || !exact && fmt.Sprint(a) != "" && isFloatString(a) && isFloatString(b)
}

// isFloatString reports whether v is a float spelled as a JSON string
// (jsonfloat's "NaN", "Infinity"): equal enough when not exact.
func isFloatString(v any) bool {
	s, ok := v.(string)
	return ok && (s == "NaN" || s == "Infinity" || s == "-Infinity")
}

func closeFloat(a, b float64, exact bool) bool {
	if exact || a == b || math.IsNaN(a) && math.IsNaN(b) {
		return a == b || math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-4*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func closeMaps(a, b map[string]float64, exact bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !closeFloat(v, w, exact) {
			return false
		}
	}
	return true
}

// closeWeights compares the weights of two trainers: float32 variables
// (the mixed-precision masters, the optimizer state) within a tolerance,
// the others (the float16 copies of the masters aside) bitwise.
func closeWeights(t *testing.T, a, b *volt.Trainer) bool {
	t.Helper()
	wa, wb := weights(t, a), weights(t, b)
	if len(wa) != len(wb) {
		return false
	}
	for v := range a.Store().IterVariables() {
		if !v.HasValue() {
			continue
		}
		x, y := wa[v.Path()], wb[v.Path()]
		switch v.Shape().DType {
		case dtypes.Float32:
			if len(x) != len(y) {
				return false
			}
			for i := 0; i < len(x); i += 4 {
				fx := math.Float32frombits(binary.LittleEndian.Uint32(x[i:]))
				fy := math.Float32frombits(binary.LittleEndian.Uint32(y[i:]))
				if !closeFloat(float64(fx), float64(fy), false) {
					return false
				}
			}
		case dtypes.Float16:
		default:
			if string(x) != string(y) {
				return false
			}
		}
	}
	return true
}
