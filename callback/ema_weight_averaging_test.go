package callback_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

func TestNewEMAWeightAveragingValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  callback.EMAWeightAveragingConfig
		want string // substring of the error; "" for success
	}{
		{"defaults", callback.EMAWeightAveragingConfig{}, ""},
		{"decay 1", callback.EMAWeightAveragingConfig{Decay: 1}, "Decay: must be in (0, 1)"},
		{"negative decay", callback.EMAWeightAveragingConfig{Decay: -0.5}, "Decay"},
		{"update every", callback.EMAWeightAveragingConfig{UpdateEvery: -1}, "UpdateEvery: must be >= 1"},
		{"start step", callback.EMAWeightAveragingConfig{StartStep: -2}, "StartStep: must be >= 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := callback.NewEMAWeightAveraging(tc.cfg).Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// handEMA returns the EMA of the recorded per-step weights of variable path
// as torch's AveragedModel computes it: the first due step copies, the
// later due steps blend.
func handEMA(steps []map[string][]float64, path string, decay float64, every int, start int) []float64 {
	var ema []float64
	for i, w := range steps {
		if i < start || i%every != 0 {
			continue
		}
		if ema == nil {
			ema = slices.Clone(w[path])
			continue
		}
		for j := range ema {
			ema[j] = decay*ema[j] + (1-decay)*w[path][j]
		}
	}
	return ema
}

func TestEMAWeightAveragingMatchesHandComputed(t *testing.T) {
	tests := []struct {
		name       string
		cfg        callback.EMAWeightAveragingConfig
		accumulate int
		start      int
	}{
		{"every step", callback.EMAWeightAveragingConfig{Decay: 0.9}, 1, 0},
		{"every second step from step 1", callback.EMAWeightAveragingConfig{Decay: 0.8, UpdateEvery: 2, StartStep: 1}, 1, 1},
		{"gradient accumulation", callback.EMAWeightAveragingConfig{Decay: 0.7}, 3, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.CopyToModel = volt.Ptr(false)
			ema := callback.NewEMAWeightAveraging(tc.cfg)
			log := newWeightLog(t)
			tr, err := fit(t, quiet(volt.Config{MaxEpochs: 2, AccumulateGradBatches: tc.accumulate}), &boring{}, trainOnly(), log, ema)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(log.steps)) != tr.GlobalStep() {
				t.Fatalf("recorded %d steps, global step %d", len(log.steps), tr.GlobalStep())
			}
			every := max(tc.cfg.UpdateEvery, 1)
			for path := range log.steps[0] {
				want := handEMA(log.steps, path, tc.cfg.Decay, every, tc.start)
				closeValues(t, "EMA of "+path, variableValues(t, tr, ema.AveragePath(path)), want, 1e-6)
				// CopyToModel false: the weights are the trained ones.
				closeValues(t, path, variableValues(t, tr, path), log.steps[len(log.steps)-1][path], 0)
			}
			n, err := ema.NumAveraged(tr)
			if err != nil {
				t.Fatal(err)
			}
			var due int64
			for i := range log.steps {
				if i >= tc.start && i%every == 0 {
					due++
				}
			}
			if n != due {
				t.Errorf("NumAveraged = %d, want %d", n, due)
			}
		})
	}
}

func TestEMAWeightAveragingCopiesToModel(t *testing.T) {
	ema := callback.NewEMAWeightAveraging(callback.EMAWeightAveragingConfig{Decay: 0.9})
	log := newWeightLog(t)
	tr, err := fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, trainOnly(), log, ema)
	if err != nil {
		t.Fatal(err)
	}
	for path := range log.steps[0] {
		closeValues(t, path, variableValues(t, tr, path), handEMA(log.steps, path, 0.9, 1, 0), 1e-6)
	}
}

// valLossLog records val_loss after every validation run of Fit.
type valLossLog struct{ values []float64 }

func (l *valLossLog) OnValidationEnd(t *volt.Trainer) error {
	if t.State().Stage != volt.RunningSanityCheck {
		l.values = append(l.values, t.CallbackMetrics()["val_loss"])
	}
	return nil
}

func TestEMAWeightAveragingValidatesWithAverage(t *testing.T) {
	ema := callback.NewEMAWeightAveraging(callback.EMAWeightAveragingConfig{Decay: 0.8, CopyToModel: volt.Ptr(false)})
	log, vals := newWeightLog(t), &valLossLog{}
	tr, err := fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), log, ema, vals)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals.values) != 2 {
		t.Fatalf("%d validation runs, want 2", len(vals.values))
	}
	trained := log.steps[len(log.steps)-1]
	for path, w := range trained { // swapped back after each validation
		closeValues(t, path, variableValues(t, tr, path), w, 0)
	}

	// A trainer without the callback validates the EMA and the trained
	// weights directly.
	direct := func(weights func(path string) []float64) float64 {
		t.Helper()
		m := &boring{}
		v := testutil.NewTrainer(t, quiet(volt.Config{}))
		if _, err := v.Validate(t.Context(), m, boringData()); err != nil { // creates the variables
			t.Fatal(err)
		}
		for path := range trained {
			setVariable(t, v, path, weights(path))
		}
		res, err := v.Validate(t.Context(), m, boringData())
		if err != nil {
			t.Fatal(err)
		}
		return res[0]["val_loss"]
	}
	withEMA := direct(func(path string) []float64 { return variableValues(t, tr, ema.AveragePath(path)) })
	withTrained := direct(func(path string) []float64 { return trained[path] })
	if got := vals.values[1]; got != withEMA {
		t.Errorf("val_loss in Fit = %.9g; Validate with the EMA weights gives %.9g", got, withEMA)
	}
	if withEMA == withTrained {
		t.Errorf("val_loss is %.9g with the EMA and with the trained weights: the test cannot tell them apart", withEMA)
	}
}

func TestEMAWeightAveragingResumeParity(t *testing.T) {
	tests := []struct {
		name        string
		atBatch     int64
		saverBefore bool // the saver is listed before the EMA callback
	}{
		{"mid-epoch, saver after", 5, false},
		{"mid-epoch, saver before", 5, true},
		{"second epoch, saver before", 11, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			volt.SeedEverything(5)
			defer volt.SeedEverything(0)
			cfg := quiet(volt.Config{MaxEpochs: 3})
			path := filepath.Join(t.TempDir(), "ema.ckpt")
			newEMA := func() *callback.EMAWeightAveraging {
				ema := callback.NewEMAWeightAveraging(callback.EMAWeightAveragingConfig{Decay: 0.9, UpdateEvery: 2, CopyToModel: volt.Ptr(false)})
				return ema
			}
			sv := &stepSaver{path: path, atBatch: tc.atBatch, when: "batch"}
			cbs := []volt.Callback{newEMA(), sv}
			if tc.saverBefore {
				cbs[0], cbs[1] = cbs[1], cbs[0]
			}
			u, err := fit(t, cfg, &ckptAdam{}, averagingData(), cbs...)
			if err != nil {
				t.Fatal(err)
			}
			if !sv.saved {
				t.Fatal("the checkpoint was not saved")
			}

			volt.SeedEverything(77)
			cfg.Callbacks = nil
			r := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 3, Callbacks: []volt.Callback{newEMA()}}), &ckptAdam{}, averagingData(), volt.FromCheckpoint(path))
			wu, wr := ckptWeights(t, u), ckptWeights(t, r)
			var emaVars int
			for p := range wu {
				if strings.HasPrefix(p, "/volt/ema/") {
					emaVars++
				}
			}
			if emaVars < 3 { // two averages and the count
				t.Fatalf("%d EMA variables in the store, want 3", emaVars)
			}
			ckptSameWeights(t, wu, wr)
		})
	}
}

// masterLog records, after every optimizer step, the full-precision value
// of variable path: its float32 master under mixed precision.
type masterLog struct {
	path     string
	steps    []map[string][]float64
	lastStep int64
	tb       *testing.T
}

func (l *masterLog) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if t.GlobalStep() > l.lastStep {
		l.lastStep = t.GlobalStep()
		src := l.path
		if t.Store().GetVariable("/volt/master"+l.path) != nil {
			src = "/volt/master" + l.path
		}
		l.steps = append(l.steps, map[string][]float64{l.path: variableValues(l.tb, t, src)})
	}
	return nil
}

func TestEMAWeightAveragingPrecisions(t *testing.T) {
	const w = "/dense/dense/weights"
	tests := []struct {
		precision string
		avgDType  dtypes.DType // dtype of the average
		tol       float64      // of the compute copy against the average
	}{
		{"32-true", dtypes.Float32, 0},
		{"64-true", dtypes.Float64, 0},
		{"bf16-mixed", dtypes.Float32, 1e-2}, // averaged from the float32 masters
	}
	for _, tc := range tests {
		t.Run(tc.precision, func(t *testing.T) {
			ema := callback.NewEMAWeightAveraging(callback.EMAWeightAveragingConfig{Decay: 0.9})
			log := &masterLog{path: w, tb: t}
			tr, err := fit(t, quiet(volt.Config{MaxEpochs: 2, Precision: tc.precision}), &boring{}, trainOnly(), log, ema)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.Store().GetVariable(ema.AveragePath(w)).DType(); got != tc.avgDType {
				t.Errorf("the average is %s, want %s", got, tc.avgDType)
			}
			want := handEMA(log.steps, w, 0.9, 1, 0)
			avg := variableValues(t, tr, ema.AveragePath(w))
			closeValues(t, "EMA", avg, want, 1e-6)
			// CopyToModel: the weights (and masters) are the average.
			closeValues(t, "weights", variableValues(t, tr, w), avg, tc.tol)
			if tr.Store().GetVariable("/volt/master"+w) != nil {
				closeValues(t, "master", variableValues(t, tr, "/volt/master"+w), avg, 0)
			}
		})
	}
}
