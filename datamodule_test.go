package volt_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// statefulData is a data module with state and hyperparameters.
type statefulData struct {
	volt.Loaders
	Counter int
}

func (d *statefulData) State() ([]byte, error)       { return json.Marshal(d.Counter) }
func (d *statefulData) LoadState(b []byte) error     { return json.Unmarshal(b, &d.Counter) }
func (d *statefulData) HParams() map[string]any      { return map[string]any{"batch": 4} }
func (d *statefulData) Setup(stage volt.Stage) error { d.Counter++; return nil }

func TestDataModuleStateAndHParams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dm.ckpt")
	dm := &statefulData{Loaders: boringData(), Counter: 41}
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), &boring{}, dm)
	if err := tr.SaveCheckpoint(path, false); err != nil {
		t.Fatal(err)
	}
	fresh := &statefulData{Loaders: boringData()}
	testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, fresh, volt.FromCheckpoint(path))
	// Setup ran (1), then the checkpoint's 42 was restored.
	if fresh.Counter != 42 {
		t.Errorf("data module state %d after resume, want 42", fresh.Counter)
	}
	raw, _ := os.ReadFile(path)
	if !contains(string(raw), `\"datamodule_hparams\":{\"batch\":4}`) {
		t.Error("the data module's hyperparameters are not in the checkpoint")
	}
}
