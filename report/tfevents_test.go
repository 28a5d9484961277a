package report

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/logger/tensorboard"
)

// TestTensorBoardOnlyRun: a run logged only by volt's TensorBoard logger
// reads as the same run logged by its CSV logger: the same rows, series,
// epochs (the "epoch" scalar, the test row after Fit included) and
// hparams (from the hparams plugin, there being no hparams.yaml). The
// metrics are seeded and float32-exact, TensorBoard's scalar type.
func TestTensorBoardOnlyRun(t *testing.T) {
	dir := t.TempDir()
	tb := tensorboard.New(tensorboard.Config{SaveDir: dir, Name: "tb", Version: new(int)})
	err := tb.Validate()
	if err != nil {
		t.Fatal(err)
	}
	csv, err := logger.NewCSV(logger.CSVConfig{SaveDir: dir, Name: "csv", Version: new(int)})
	if err != nil {
		t.Fatal(err)
	}
	hp := map[string]any{"lr": 0.02, "hidden": 16.0, "optimizer": "adam", "nesterov": true}
	rng := rand.New(rand.NewPCG(24, 10))
	var step int64
	for epoch := range 3 {
		for range 4 {
			step += 1 + int64(rng.IntN(3))
			row := map[string]float64{"epoch": float64(epoch), "train_loss": float64(float32(rng.Float64()))}
			if rng.IntN(4) == 0 {
				row["train_acc"] = float64(float32(rng.Float64()))
			}
			for _, l := range []logger.Logger{tb, csv} {
				if err := l.LogMetrics(row, step); err != nil {
					t.Fatal(err)
				}
			}
		}
		val := map[string]float64{"epoch": float64(epoch), "val_loss": float64(float32(rng.Float64())), "val_f1": math.Inf(1)}
		for _, l := range []logger.Logger{tb, csv} {
			if err := l.LogMetrics(val, step); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, l := range []logger.Logger{tb, csv} {
		if err := l.LogMetrics(map[string]float64{"epoch": 3, "test_loss": 0.5}, step); err != nil {
			t.Fatal(err)
		}
		if err := l.LogHyperparams(hp); err != nil {
			t.Fatal(err)
		}
		if err := l.Finalize(logger.StatusSuccess); err != nil {
			t.Fatal(err)
		}
	}
	fromTB, err := LoadRun(tb.LogDir())
	if err != nil {
		t.Fatal(err)
	}
	fromCSV, err := LoadRun(csv.LogDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tb.LogDir(), MetricsFileName)); err == nil {
		t.Fatal("the TensorBoard run has a metrics.csv; the test reads nothing from the event files")
	}
	if !reflect.DeepEqual(fromTB.Metrics, fromCSV.Metrics) {
		t.Errorf("metrics from the event files:\n%+v\nfrom metrics.csv:\n%+v", fromTB.Metrics, fromCSV.Metrics)
	}
	if fromTB.Metrics.Epochs() != 3 || fromTB.Metrics.Rows != 16 {
		t.Errorf("%d epochs, %d rows; want 3 and 16", fromTB.Metrics.Epochs(), fromTB.Metrics.Rows)
	}
	if !reflect.DeepEqual(fromTB.Hparams, hp) || len(fromTB.Notes) != 0 {
		t.Errorf("hparams %v (notes %v), want %v", fromTB.Hparams, fromTB.Notes, hp)
	}
	dirs, _, err := ResolveDirs([]string{filepath.Join(dir, "tb")})
	if err != nil || len(dirs) != 1 {
		t.Errorf("ResolveDirs of the TensorBoard parent: %v, %v", dirs, err)
	}
}

// TestTensorBoardTruncatedFile: a file cut inside a record (a killed run)
// is read up to that record, with a note.
func TestTensorBoardTruncatedFile(t *testing.T) {
	dir := t.TempDir()
	tb := tensorboard.New(tensorboard.Config{SaveDir: dir, Name: ".", Version: new(int)})
	err := tb.Validate()
	if err != nil {
		t.Fatal(err)
	}
	for step := range int64(5) {
		if err := tb.LogMetrics(map[string]float64{"loss": float64(step)}, step); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.Finalize(logger.StatusSuccess); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tb.EventFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tb.EventFile(), b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := LoadRun(tb.LogDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Metrics.Series["loss"].Len(); got < 4 || len(run.Notes) != 1 {
		t.Errorf("%d loss values, notes %v; want all but the cut record's and one note", got, run.Notes)
	}
}
