package volt_test

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
)

// TestLogMetricResumeLogsTheSameRows: a training metric object logged per
// step and per epoch, a checkpoint taken in OnTrainBatchEnd (mid-epoch, or
// at the epoch's last batch) or in OnTrainEpochEnd, and a run resumed from it: the rows the
// resumed run logs are bitwise those the uninterrupted run logged after the
// checkpoint. (The batch's step value, still to be sent when the checkpoint
// was taken, is the batch's own; the next epoch's state starts empty.)
func TestLogMetricResumeLogsTheSameRows(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	tests := []struct {
		name    string
		atBatch int64
		when    string // saver.when
	}{
		{"mid-epoch", 2, "batch"},
		{"the epoch's last batch", int64(len(batches)), "batch"},
		{"the epoch's end", int64(len(batches)), "epoch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "metric.ckpt")
			dm := volt.Loaders{Train: &fixedLoader{batches}, Val: []data.Loader{&fixedLoader{batches[:1]}}}
			opts := []volt.LogOption{volt.OnStep(true), volt.OnEpoch(true)}
			cfg := func(mem *memLogger, cbs ...volt.Callback) volt.Config {
				c := quiet(volt.Config{MaxEpochs: 2, LogEveryNSteps: 1, AccumulateGradBatches: 2, Loggers: []logger.Logger{mem}, Callbacks: cbs})
				c.DisableLoggers = false
				return c
			}
			full := &memLogger{}
			sv := &saver{path: path, atBatch: tc.atBatch, when: tc.when, mem: full}
			testutil.Fit(t, cfg(full, sv), newMetricModule(t, opts...), dm)
			if !sv.saved {
				t.Fatal("the checkpoint was not saved")
			}
			resumed := &memLogger{}
			testutil.Fit(t, cfg(resumed), newMetricModule(t, opts...), volt.Loaders{Train: &fixedLoader{batches}, Val: []data.Loader{&fixedLoader{batches[:1]}}}, volt.FromCheckpoint(path))
			want := full.rows[sv.mark:]
			if len(resumed.rows) != len(want) {
				t.Fatalf("the resumed run logged %d rows, the uninterrupted one %d after the checkpoint", len(resumed.rows), len(want))
			}
			for i, row := range want {
				if got := rowString(resumed.rows[i]); got != rowString(row) {
					t.Errorf("row %d (step %d): resumed %s, uninterrupted %s", i, full.steps[sv.mark+i], got, rowString(row))
				}
			}
		})
	}
}

// rowString writes a row's values with their bits, in name order.
func rowString(row map[string]float64) string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(row)) {
		s += fmt.Sprintf("%s=%v(%x) ", k, row[k], math.Float64bits(row[k]))
	}
	return s
}

// dirLogger is a memLogger with a log directory, so that the trainer's
// default checkpointing is on.
type dirLogger struct {
	memLogger
	dir string
}

func (l *dirLogger) LogDir() string { return l.dir }

// rotatingLoader gives its batches starting one batch later each epoch,
// so that an epoch's metric values differ from those of two epochs
// together (a ratio of the same batches twice is the ratio of them once).
type rotatingLoader struct{ batches []*data.Batch }

func (l *rotatingLoader) NumBatches() int { return len(l.batches) - 1 }

func (l *rotatingLoader) Batches(_ context.Context, epoch, skip int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		for i := skip; i < l.NumBatches(); i++ {
			if !yield(l.batches[(epoch+i)%len(l.batches)], nil) {
				return
			}
		}
	}
}

// TestLogMetricResumeFromDefaultCheckpoint: a run resumed from the default
// checkpoint of an epoch's end (saved after that epoch's rows were sent)
// starts the next epoch's training metric state empty, although no step of
// the resumed run has logged the metric when that epoch starts: its rows are
// bitwise the uninterrupted run's.
func TestLogMetricResumeFromDefaultCheckpoint(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	opts := []volt.LogOption{volt.OnStep(true), volt.OnEpoch(true)}
	fit := func(epochs int, l logger.Logger, fitOpts ...volt.RunOption) {
		t.Helper()
		cfg := quiet(volt.Config{MaxEpochs: epochs, LogEveryNSteps: 1, Loggers: []logger.Logger{l}})
		cfg.DisableLoggers = false
		testutil.Fit(t, cfg, newMetricModule(t, opts...), volt.Loaders{Train: &rotatingLoader{batches}}, fitOpts...)
	}
	full := &dirLogger{dir: t.TempDir()}
	fit(2, full)
	first := &dirLogger{dir: t.TempDir()}
	fit(1, first)
	path := filepath.Join(first.dir, "checkpoints", fmt.Sprintf("epoch=0-step=%d.ckpt", len(batches)-1))
	resumed := &memLogger{}
	fit(2, resumed, volt.FromCheckpoint(path))
	want := full.rows[len(first.rows):]
	if len(resumed.rows) != len(want) {
		t.Fatalf("the resumed run logged %d rows, the uninterrupted one %d after the checkpoint", len(resumed.rows), len(want))
	}
	for i, row := range want {
		if got := rowString(resumed.rows[i]); got != rowString(row) {
			t.Errorf("row %d (step %d): resumed %s, uninterrupted %s", i, full.steps[len(first.rows)+i], got, rowString(row))
		}
	}
}

// stepValueRecorder records, in every OnTrainBatchEnd, the step value of a
// metric object that the callbacks see, by global step.
type stepValueRecorder struct {
	name string
	seen map[int64]float64
}

func (r *stepValueRecorder) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if v, ok := t.CallbackMetrics()[r.name]; ok {
		r.seen[t.GlobalStep()] = v
	}
	return nil
}

// TestLogMetricResumeCallbackMetrics: after a resume from a checkpoint
// taken in OnTrainBatchEnd, the callbacks see the step value of a metric
// object that the uninterrupted run's callbacks saw: the checkpointed
// batch's, published when the resumed run sends that batch's row.
func TestLogMetricResumeCallbackMetrics(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	path := filepath.Join(t.TempDir(), "metric.ckpt")
	opts := []volt.LogOption{volt.OnStep(true), volt.OnEpoch(true)}
	fit := func(cbs []volt.Callback, runOpts ...volt.RunOption) {
		t.Helper()
		cfg := quiet(volt.Config{MaxEpochs: 2, LogEveryNSteps: 1, Loggers: []logger.Logger{&memLogger{}}, Callbacks: cbs})
		cfg.DisableLoggers = false
		testutil.Fit(t, cfg, newMetricModule(t, opts...), volt.Loaders{Train: &fixedLoader{batches}}, runOpts...)
	}
	full := &stepValueRecorder{name: "train_acc_step", seen: map[int64]float64{}}
	sv := &saver{path: path, atBatch: 2, when: "batch", mem: &memLogger{}}
	fit([]volt.Callback{sv, full})
	resumed := &stepValueRecorder{name: "train_acc_step", seen: map[int64]float64{}}
	fit([]volt.Callback{resumed}, volt.FromCheckpoint(path))
	for step := sv.step + 1; step <= int64(2*len(batches)); step++ {
		want, ok := full.seen[step]
		if !ok {
			t.Fatalf("step %d: the uninterrupted run's callbacks saw no train_acc_step", step)
		}
		if got, ok := resumed.seen[step]; !ok || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("step %d: the resumed run's callbacks saw train_acc_step %v (present %v), the uninterrupted run's %v", step, got, ok, want)
		}
	}
}

// epochStartSaver saves a checkpoint in the first OnTrainEpochStart of its
// run.
type epochStartSaver struct {
	path  string
	saved bool
}

func (s *epochStartSaver) OnTrainEpochStart(t *volt.Trainer) error {
	if s.saved {
		return nil
	}
	s.saved = true
	return t.SaveCheckpoint(s.path, false)
}

// TestLogMetricResumedCheckpointBeforeAStep: a checkpoint a resumed run
// takes before its training step is traced (in OnTrainEpochStart of an
// epoch resumed after its last batch: no batch is left to run) holds the
// training metrics' state it restored, bitwise.
func TestLogMetricResumedCheckpointBeforeAStep(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	dir := t.TempDir()
	first, again := filepath.Join(dir, "first.ckpt"), filepath.Join(dir, "again.ckpt")
	opts := []volt.LogOption{volt.OnStep(false), volt.OnEpoch(true)}
	fit := func(cb volt.Callback, runOpts ...volt.RunOption) {
		t.Helper()
		testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1, Callbacks: []volt.Callback{cb}}), newMetricModule(t, opts...), volt.Loaders{Train: &fixedLoader{batches}}, runOpts...)
	}
	fit(&saver{path: first, atBatch: int64(len(batches)), when: "batch", mem: &memLogger{}})
	fit(&epochStartSaver{path: again}, volt.FromCheckpoint(first))
	state := func(path string) map[string]string {
		f, err := checkpoint.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, ct := range f.Tensors {
			if strings.HasPrefix(ct.Name, "/volt/metric_state/") {
				out[ct.Name] = fmt.Sprintf("%v %x", ct.Shape, ct.Data)
			}
		}
		return out
	}
	want, got := state(first), state(again)
	if len(want) == 0 {
		t.Fatal("the first checkpoint holds no training metric state")
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: the resumed run's checkpoint has %q (present %v), the one it resumed from %q", name, g, ok, w)
		}
	}
}
