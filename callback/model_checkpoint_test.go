package callback_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
)

func TestModelCheckpointConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  callback.ModelCheckpointConfig
		want []string
	}{
		{"top k below -1", callback.ModelCheckpointConfig{SaveTopK: volt.Ptr(-2)},
			[]string{"ModelCheckpointConfig.SaveTopK: must be -1 (keep all), 0 (keep none) or k >= 1, got -2"}},
		{"top k without monitor", callback.ModelCheckpointConfig{SaveTopK: volt.Ptr(3)},
			[]string{"ModelCheckpointConfig.SaveTopK: 3 needs a Monitor to rank checkpoints; without one it must be -1, 0 or 1"}},
		{"bad mode", callback.ModelCheckpointConfig{Monitor: "val_loss", Mode: "avg"},
			[]string{`ModelCheckpointConfig.Mode: unknown "avg"; valid: "min", "max"`}},
		{"steps and epochs", callback.ModelCheckpointConfig{EveryNTrainSteps: 2, EveryNEpochs: 1},
			[]string{"ModelCheckpointConfig.EveryNEpochs, EveryNTrainSteps: mutually exclusive, set only one of EveryNTrainSteps, EveryNEpochs, TrainTimeInterval"}},
		{"all three cadences", callback.ModelCheckpointConfig{EveryNTrainSteps: 2, EveryNEpochs: 1, TrainTimeInterval: time.Minute},
			[]string{"ModelCheckpointConfig.EveryNEpochs, EveryNTrainSteps, TrainTimeInterval: mutually exclusive"}},
		{"negative cadences", callback.ModelCheckpointConfig{EveryNTrainSteps: -1, EveryNEpochs: -2, TrainTimeInterval: -time.Second},
			[]string{"EveryNTrainSteps: must be >= 1 (0: unset), got -1", "EveryNEpochs: must be >= 1 (0: unset), got -2", "TrainTimeInterval: must be > 0 (0: unset), got -1s"}},
		{"bad filename", callback.ModelCheckpointConfig{Filename: "{epoch"},
			[]string{`ModelCheckpointConfig.Filename: "{epoch": unclosed "{epoch"`}},
		{"bad format spec", callback.ModelCheckpointConfig{Filename: "{val_loss:>8}"},
			[]string{`unsupported format spec ">8"`}},
		{"several at once", callback.ModelCheckpointConfig{Mode: "best", SaveTopK: volt.Ptr(-5)},
			[]string{"ModelCheckpointConfig.Mode", "ModelCheckpointConfig.SaveTopK"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := callback.NewModelCheckpoint(tc.cfg).Validate()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestModelCheckpointTopK(t *testing.T) {
	scores := []float64{0.5, 0.3, 0.4, 0.2, 0.6}
	tests := []struct {
		mode      string
		k         int
		files     []string
		best      string
		bestScore float64
		kth       string
	}{
		{"min", 1, []string{"epoch=3.ckpt"}, "epoch=3.ckpt", 0.2, "epoch=3.ckpt"},
		{"min", 2, []string{"epoch=1.ckpt", "epoch=3.ckpt"}, "epoch=3.ckpt", 0.2, "epoch=1.ckpt"},
		{"min", -1, []string{"epoch=0.ckpt", "epoch=1.ckpt", "epoch=2.ckpt", "epoch=3.ckpt", "epoch=4.ckpt"}, "epoch=3.ckpt", 0.2, "epoch=4.ckpt"},
		{"min", 0, nil, "", 0, ""},
		{"max", 1, []string{"epoch=4.ckpt"}, "epoch=4.ckpt", 0.6, "epoch=4.ckpt"},
		{"max", 2, []string{"epoch=0.ckpt", "epoch=4.ckpt"}, "epoch=4.ckpt", 0.6, "epoch=0.ckpt"},
		{"max", 3, []string{"epoch=0.ckpt", "epoch=2.ckpt", "epoch=4.ckpt"}, "epoch=4.ckpt", 0.6, "epoch=2.ckpt"},
	}
	for _, tc := range tests {
		t.Run(tc.mode+"/k="+itoa(tc.k), func(t *testing.T) {
			dir := t.TempDir()
			mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, Filename: "{epoch}", Monitor: "score", Mode: tc.mode, SaveTopK: volt.Ptr(tc.k)})
			if _, err := fit(t, quiet(volt.Config{MaxEpochs: len(scores)}), &boring{}, boringData(), ckptScore{"score", scores}, mc); err != nil {
				t.Fatal(err)
			}
			if got := ckptFiles(t, dir); !slices.Equal(got, tc.files) {
				t.Errorf("files %v, want %v", got, tc.files)
			}
			kept := ckptBases(slices.Collect(mapsKeys(mc.BestKModels())))
			if tc.k == 0 {
				kept = nil
			}
			if !slices.Equal(kept, tc.files) {
				t.Errorf("BestKModels %v, want %v", mc.BestKModels(), tc.files)
			}
			if got := base(mc.BestModelPath()); got != tc.best {
				t.Errorf("BestModelPath %q, want %q", got, tc.best)
			}
			if s, ok := mc.BestModelScore(); ok != (tc.best != "") || s != tc.bestScore {
				t.Errorf("BestModelScore = %v, %v, want %v", s, ok, tc.bestScore)
			}
			if got := base(mc.KthBestModelPath()); got != tc.kth {
				t.Errorf("KthBestModelPath %q, want %q", got, tc.kth)
			}
		})
	}
}

func TestModelCheckpointCadence(t *testing.T) {
	all := volt.Ptr(-1)
	clock := newFakeClock()
	tests := []struct {
		name   string
		cfg    callback.ModelCheckpointConfig
		config volt.Config
		data   volt.Loaders
		before []volt.Callback
		files  []string
	}{
		{"every epoch by default", callback.ModelCheckpointConfig{SaveTopK: all}, volt.Config{MaxEpochs: 3}, boringData(), nil,
			[]string{"epoch=0-step=4.ckpt", "epoch=1-step=8.ckpt", "epoch=2-step=12.ckpt"}},
		{"every 3 train steps", callback.ModelCheckpointConfig{SaveTopK: all, EveryNTrainSteps: 3}, volt.Config{MaxEpochs: 2}, boringData(), nil,
			[]string{"epoch=0-step=3.ckpt", "epoch=1-step=6.ckpt"}},
		{"every train step, accumulating 2 batches", callback.ModelCheckpointConfig{SaveTopK: all, EveryNTrainSteps: 1}, volt.Config{MaxEpochs: 2, AccumulateGradBatches: 2}, boringData(), nil,
			[]string{"epoch=0-step=1.ckpt", "epoch=0-step=2.ckpt", "epoch=1-step=3.ckpt", "epoch=1-step=4.ckpt"}},
		{"every 2 epochs, validating", callback.ModelCheckpointConfig{SaveTopK: all, EveryNEpochs: 2}, volt.Config{MaxEpochs: 5}, boringData(), nil,
			[]string{"epoch=1-step=8.ckpt", "epoch=3-step=16.ckpt"}},
		{"every 2 epochs, training only", callback.ModelCheckpointConfig{SaveTopK: all, EveryNEpochs: 2}, volt.Config{MaxEpochs: 5}, trainOnly(), nil,
			[]string{"epoch=1-step=8.ckpt", "epoch=3-step=16.ckpt"}},
		{"every 2.5 s of training", callback.ModelCheckpointConfig{SaveTopK: all, TrainTimeInterval: 2500 * time.Millisecond, Now: clock.Now},
			volt.Config{MaxEpochs: 2}, boringData(), []volt.Callback{ticker{clock, time.Second}},
			[]string{"epoch=0-step=3.ckpt", "epoch=1-step=6.ckpt"}},
		{"latest only", callback.ModelCheckpointConfig{EveryNTrainSteps: 3}, volt.Config{MaxEpochs: 2}, boringData(), nil,
			[]string{"epoch=1-step=6.ckpt"}},
		{"latest only, with last", callback.ModelCheckpointConfig{EveryNTrainSteps: 3, SaveLast: true}, volt.Config{MaxEpochs: 2}, boringData(), nil,
			[]string{"epoch=1-step=6.ckpt", "last.ckpt"}},
		{"no sanity-check save, validating every epoch", callback.ModelCheckpointConfig{SaveTopK: all, Monitor: "val_loss"}, volt.Config{MaxEpochs: 2, NumSanityValSteps: volt.Ptr(-1)}, boringData(), nil,
			[]string{"epoch=0-step=4.ckpt", "epoch=1-step=8.ckpt"}},
		{"name clash", callback.ModelCheckpointConfig{SaveTopK: all, EveryNTrainSteps: 2, Filename: "{epoch}"}, volt.Config{MaxEpochs: 2}, boringData(), nil,
			[]string{"epoch=0-v1.ckpt", "epoch=0.ckpt", "epoch=1-v1.ckpt", "epoch=1.ckpt"}},
		{"same name, latest only", callback.ModelCheckpointConfig{EveryNTrainSteps: 2, Filename: "{epoch}"}, volt.Config{MaxEpochs: 2}, boringData(), nil,
			[]string{"epoch=1.ckpt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Dirpath = t.TempDir()
			cbs := append(tc.before, newCkpt(t, tc.cfg))
			if _, err := fit(t, quiet(tc.config), &boring{}, tc.data, cbs...); err != nil {
				t.Fatal(err)
			}
			if got := ckptFiles(t, tc.cfg.Dirpath); !slices.Equal(got, tc.files) {
				t.Errorf("files %v, want %v", got, tc.files)
			}
		})
	}
}

func TestModelCheckpointDefaultDirpath(t *testing.T) {
	root := t.TempDir()
	mc := newCkpt(t, callback.ModelCheckpointConfig{})
	cfg := volt.Config{MaxEpochs: 1, DefaultRootDir: root}
	tr, err := fit(t, quiet(cfg), &boring{}, boringData(), mc)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tr.LogDir(), "checkpoints")
	if mc.Dirpath() != want {
		t.Errorf("Dirpath %q, want %q", mc.Dirpath(), want)
	}
	if got := ckptFiles(t, want); !slices.Equal(got, []string{"epoch=0-step=4.ckpt"}) {
		t.Errorf("files %v", got)
	}
}

func TestModelCheckpointSaveLast(t *testing.T) {
	t.Run("a copy of the newest checkpoint", func(t *testing.T) {
		dir := t.TempDir()
		mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, SaveLast: true})
		tr, err := fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), mc)
		if err != nil {
			t.Fatal(err)
		}
		if got := ckptFiles(t, dir); !slices.Equal(got, []string{"epoch=1-step=8.ckpt", "last.ckpt"}) {
			t.Fatalf("files %v", got)
		}
		last := filepath.Join(dir, "last.ckpt")
		if tr.LastCheckpoint() != last || mc.LastModelPath() != last {
			t.Errorf("LastCheckpoint %q, LastModelPath %q, want %q", tr.LastCheckpoint(), mc.LastModelPath(), last)
		}
		// The end of training is the step of the last save: no second save.
		a, _ := os.ReadFile(filepath.Join(dir, "epoch=1-step=8.ckpt"))
		b, _ := os.ReadFile(last)
		if !bytes.Equal(a, b) {
			t.Error("last.ckpt is not a copy of epoch=1-step=8.ckpt")
		}
		if info, err := os.Lstat(last); err != nil || !info.Mode().IsRegular() {
			t.Errorf("last.ckpt is not a regular file: %v, %v", info, err)
		}
		if _, err := tr.Validate(t.Context(), &boring{}, boringData(), volt.FromCheckpoint("last")); err != nil {
			t.Errorf(`Validate(FromCheckpoint("last")): %v`, err)
		}
	})
	t.Run("top 0, saved at the end of training", func(t *testing.T) {
		dir := t.TempDir()
		mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, SaveTopK: volt.Ptr(0), SaveLast: true, EveryNTrainSteps: 3})
		tr, err := fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), mc)
		if err != nil {
			t.Fatal(err)
		}
		if got := ckptFiles(t, dir); !slices.Equal(got, []string{"last.ckpt"}) {
			t.Fatalf("files %v", got)
		}
		// last.ckpt holds the end of training (step 8): resuming from it
		// trains no more and has the same weights.
		r := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), volt.FromCheckpoint(filepath.Join(dir, "last.ckpt")))
		if r.GlobalStep() != 8 {
			t.Errorf("resumed from last.ckpt at step %d, want 8", r.GlobalStep())
		}
		ckptSameWeights(t, ckptWeights(t, tr), ckptWeights(t, r))
	})
}

func TestModelCheckpointBest(t *testing.T) {
	dir := t.TempDir()
	mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, Monitor: "val_loss", Mode: "max"})
	rec := &ckptRecorder{Name: "val_loss"}
	tr, err := fit(t, quiet(volt.Config{MaxEpochs: 4}), &boring{}, boringData(), rec, mc)
	if err != nil {
		t.Fatal(err)
	}
	worst := slices.Max(rec.Values)
	if s, ok := mc.BestModelScore(); !ok || s != worst {
		t.Fatalf("BestModelScore %v, want the largest val_loss of %v", s, rec.Values)
	}
	want := "epoch=" + itoa(slices.Index(rec.Values, worst))
	if !strings.HasPrefix(base(mc.BestModelPath()), want) {
		t.Errorf("BestModelPath %s, want %s-…", mc.BestModelPath(), want)
	}
	res, err := tr.Validate(t.Context(), &boring{}, boringData(), volt.FromCheckpoint("best"))
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0]["val_loss"]; got != worst {
		t.Errorf(`Validate(FromCheckpoint("best")) val_loss = %v, want %v (per epoch: %v)`, got, worst, rec.Values)
	}
}

func TestModelCheckpointMissingMonitor(t *testing.T) {
	t.Run("after validation: an error naming the metrics", func(t *testing.T) {
		mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: t.TempDir(), Monitor: "val_los"})
		_, err := fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), mc)
		want := `monitored metric "val_los" (ModelCheckpointConfig.Monitor) was not logged; available metrics: epoch, step, train_loss, val_loss`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Fit error = %v, want it to contain %q", err, want)
		}
	})
	t.Run("before the first validation: said once, skipped; a save a validation follows waits for it", func(t *testing.T) {
		dir := t.TempDir()
		var buf bytes.Buffer
		mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, Monitor: "val_loss", EveryNTrainSteps: 2, SaveTopK: volt.Ptr(-1)})
		if _, err := fit(t, capture(volt.Config{MaxEpochs: 2}, &buf), &boring{}, boringData(), mc); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(buf.String(), "no validation has run yet"); n != 1 {
			t.Errorf("the missing metric was reported %d times, want 1:\n%s", n, buf.String())
		}
		// Step 2 comes before the first validation (the sanity check keeps
		// no metrics) and no validation follows its batch: skipped, as in
		// Lightning 2.2.5 and 2.5.5. Step 4's batch is followed by the
		// epoch's validation: it waits for it (2.5.5) and ranks with its
		// value; step 8 too.
		if got := ckptFiles(t, dir); !slices.Equal(got, []string{"epoch=0-step=4.ckpt", "epoch=1-step=6.ckpt", "epoch=1-step=8.ckpt"}) {
			t.Errorf("files %v", got)
		}
	})
	t.Run("not logged by the first validation either: said once, skipped, then an error", func(t *testing.T) {
		var buf bytes.Buffer
		mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: t.TempDir(), Monitor: "val_los", EveryNTrainSteps: 2, SaveTopK: volt.Ptr(-1)})
		_, err := fit(t, capture(volt.Config{MaxEpochs: 2}, &buf), &boring{}, boringData(), mc)
		if n := strings.Count(buf.String(), "no validation has run yet"); n != 1 {
			t.Errorf("the missing metric was reported %d times, want 1:\n%s", n, buf.String())
		}
		if want := `monitored metric "val_los" (ModelCheckpointConfig.Monitor) was not logged`; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Fit error = %v, want it to contain %q", err, want)
		}
	})
}

func TestModelCheckpointResume(t *testing.T) {
	scores := []float64{0.5, 0.3, 0.4, 0.2}
	cfgIn := func(dir string) callback.ModelCheckpointConfig {
		return callback.ModelCheckpointConfig{Dirpath: dir, Filename: "{epoch}", Monitor: "score", SaveTopK: volt.Ptr(2), SaveLast: true}
	}
	run := func(t *testing.T, cfg volt.Config, mc *callback.ModelCheckpoint, opts ...volt.RunOption) *volt.Trainer {
		t.Helper()
		volt.SeedEverything(5)
		t.Cleanup(func() { volt.SeedEverything(0) })
		cfg.Callbacks = []volt.Callback{ckptScore{"score", scores}, mc}
		tr := testutil.Fit(t, cfg, &ckptAdam{}, boringData(), opts...)
		return tr
	}
	refDir := t.TempDir()
	ref := newCkpt(t, cfgIn(refDir))
	refTrainer := run(t, quiet(volt.Config{MaxEpochs: 4}), ref)

	t.Run("same directory: the top k continues", func(t *testing.T) {
		dir := t.TempDir()
		run(t, quiet(volt.Config{MaxEpochs: 2}), newCkpt(t, cfgIn(dir)))
		if got := ckptFiles(t, dir); !slices.Equal(got, []string{"epoch=0.ckpt", "epoch=1.ckpt", "last.ckpt"}) {
			t.Fatalf("after 2 epochs: files %v", got)
		}
		mc := newCkpt(t, cfgIn(dir))
		tr := run(t, quiet(volt.Config{MaxEpochs: 4}), mc, volt.FromCheckpoint(filepath.Join(dir, "last.ckpt")))
		if got, want := ckptFiles(t, dir), ckptFiles(t, refDir); !slices.Equal(got, want) {
			t.Errorf("files %v, uninterrupted %v", got, want)
		}
		if got, want := scoresByBase(mc.BestKModels()), scoresByBase(ref.BestKModels()); !slices.Equal(got, want) {
			t.Errorf("BestKModels %v, uninterrupted %v", got, want)
		}
		if base(mc.BestModelPath()) != base(ref.BestModelPath()) || base(mc.KthBestModelPath()) != base(ref.KthBestModelPath()) {
			t.Errorf("best %s kth %s, uninterrupted %s, %s", mc.BestModelPath(), mc.KthBestModelPath(), ref.BestModelPath(), ref.KthBestModelPath())
		}
		ckptSameWeights(t, ckptWeights(t, refTrainer), ckptWeights(t, tr))
	})
	t.Run("another directory: only the best path", func(t *testing.T) {
		first := t.TempDir()
		run(t, quiet(volt.Config{MaxEpochs: 2}), newCkpt(t, cfgIn(first)))
		dir := t.TempDir()
		var buf bytes.Buffer
		mc := newCkpt(t, cfgIn(dir))
		run(t, capture(volt.Config{MaxEpochs: 3}, &buf), mc, volt.FromCheckpoint(filepath.Join(first, "last.ckpt")))
		if !strings.Contains(buf.String(), "only best_model_path is restored") {
			t.Errorf("no warning about the directory:\n%s", buf.String())
		}
		// Epoch 2 (0.4) is the only save in dir; the best path restored from
		// the first directory (epoch 1, 0.3) is not compared with it.
		if got := ckptFiles(t, dir); !slices.Equal(got, []string{"epoch=2.ckpt", "last.ckpt"}) {
			t.Errorf("files %v", got)
		}
		if got := ckptFiles(t, first); !slices.Equal(got, []string{"epoch=0.ckpt", "epoch=1.ckpt", "last.ckpt"}) {
			t.Errorf("files of the first directory %v: none may be removed", got)
		}
	})
}

// scoresByBase renders kept checkpoints as sorted "base=score" strings.
func scoresByBase(m map[string]float64) []string {
	var out []string
	for p, s := range m {
		out = append(out, base(p)+"="+strconvF(s))
	}
	slices.Sort(out)
	return out
}
