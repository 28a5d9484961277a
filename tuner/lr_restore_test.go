package tuner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/voltml/volt"
)

// TestLRFindLeavesTrainerBitwise trains a trainer a few steps (Adam, so it has
// optimizer state), runs LRFind on it and checks that its checkpoint (weights,
// optimizer state, progress, trainer state) is byte for byte the one it saved
// before, and that the module's LR changed only when Apply is given.
func TestLRFindLeavesTrainerBitwise(t *testing.T) {
	d := loadLinearData(t)
	for _, tc := range []struct {
		name  string
		apply bool
	}{{"observe", false}, {"apply", true}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrainer(t, volt.Config{MaxSteps: 3})
			m := &linearModule{LR: 0.01, Adam: true, init: d}
			ctx := context.Background()
			if err := tr.Fit(ctx, m, d.loaders()); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			before, after := filepath.Join(dir, "before.ckpt"), filepath.Join(dir, "after.ckpt")
			if err := tr.SaveCheckpoint(before, false); err != nil {
				t.Fatal(err)
			}
			progress := tr.Progress()
			opts := LRFindOptions{MinLR: 1e-4, MaxLR: 1, NumTraining: 30}
			if tc.apply {
				opts.Apply = func(lr float64) { m.LR = lr }
				opts.CSVPath, opts.HTMLPath = filepath.Join(dir, "lr.csv"), filepath.Join(dir, "lr.html")
			}
			res, err := LRFind(ctx, tr, m, d.loaders(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.SuggestedIndex < 0 {
				t.Fatalf("no suggestion from %d points", len(res.Losses))
			}
			if err := tr.SaveCheckpoint(after, false); err != nil {
				t.Fatal(err)
			}
			a, err := os.ReadFile(before)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(after)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("the trainer's checkpoint changed across LRFind (%d vs %d bytes)", len(a), len(b))
			}
			if !reflect.DeepEqual(progress, tr.Progress()) {
				t.Errorf("progress changed: %+v, was %+v", tr.Progress(), progress)
			}
			if tc.apply {
				csv, err := os.ReadFile(opts.CSVPath)
				if err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(string(csv), "\n"); n != len(res.Losses)+1 {
					t.Errorf("CSV has %d lines, want %d", n, len(res.Losses)+1)
				}
				page, err := os.ReadFile(opts.HTMLPath)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(page), `class="suggestion"`) {
					t.Errorf("the page does not mark the suggestion")
				}
			}
			wantLR := 0.01
			if tc.apply {
				wantLR = res.SuggestedLR
			}
			if m.LR != wantLR {
				t.Errorf("module LR %v, want %v", m.LR, wantLR)
			}
		})
	}
}

// TestLRFindStartsFromTrainerWeights checks that the sweep starts from the
// trainer's current weights: after training, the sweep's first loss is not
// the one it has from the initial weights.
func TestLRFindStartsFromTrainerWeights(t *testing.T) {
	d := loadLinearData(t)
	ctx := context.Background()
	opts := LRFindOptions{MinLR: 1e-4, MaxLR: 1, NumTraining: 5}
	fresh, err := LRFind(ctx, newTrainer(t, volt.Config{}), &linearModule{LR: 0.1, init: d}, d.loaders(), opts)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTrainer(t, volt.Config{MaxSteps: 8})
	m := &linearModule{LR: 0.1, init: d}
	if err := tr.Fit(ctx, m, d.loaders()); err != nil {
		t.Fatal(err)
	}
	warm, err := LRFind(ctx, tr, m, d.loaders(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !(warm.Losses[0] < fresh.Losses[0]/2) {
		t.Errorf("first loss after 8 training steps %v, from the initial weights %v: the sweep did not start from the trained weights", warm.Losses[0], fresh.Losses[0])
	}
}
