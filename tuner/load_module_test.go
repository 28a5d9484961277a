package tuner

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/voltml/volt"
)

// TestLRFindFromLoadedModule: a sweep of a module given its weights by
// volt.LoadModule starts from those weights, as one on a trainer that ran
// the module does, and not from the module's own initialisation.
func TestLRFindFromLoadedModule(t *testing.T) {
	d := loadLinearData(t)
	ctx := context.Background()
	opts := LRFindOptions{MinLR: 1e-4, MaxLR: 1, NumTraining: 20, NoEarlyStop: true}
	trained := &linearModule{LR: 0.1, init: d}
	tr := newTrainer(t, volt.Config{MaxEpochs: 3})
	if err := tr.Fit(ctx, trained, d.loaders()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.ckpt")
	if err := tr.SaveCheckpoint(path, true); err != nil {
		t.Fatal(err)
	}
	fromTrainer, err := LRFind(ctx, tr, trained, d.loaders(), opts)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := volt.LoadModule(path, &linearModule{LR: 0.1, init: d}) // it records no hyper-parameters
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := LRFind(ctx, newTrainer(t, volt.Config{}), loaded, d.loaders(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFile.Losses[:3], fromTrainer.Losses[:3]) {
		t.Errorf("sweep of the loaded module starts at %v, the trained trainer's at %v", fromFile.Losses[:3], fromTrainer.Losses[:3])
	}
	fresh, err := LRFind(ctx, newTrainer(t, volt.Config{}), &linearModule{LR: 0.1, init: d}, d.loaders(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(fresh.Losses[:3], fromTrainer.Losses[:3]) {
		t.Error("an untrained module sweeps like the trained one: the test cannot tell")
	}
}
