package volt_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// epochEndLogs is testdata/lightning/epoch_end_logs/epoch_end_logs.json,
// recorded from Lightning 2.2.5 by epoch_end_logs.py beside it.
type epochEndLogs struct {
	Scenarios map[string]json.RawMessage `json:"scenarios"`
}

// epochEndLogRun is one of its EarlyStopping/ModelCheckpoint scenarios.
type epochEndLogRun struct {
	Monitor string `json:"monitor"`
	Mode    string `json:"mode"`
	Checks  []struct {
		Epoch int     `json:"epoch"`
		Value float64 `json:"value"`
	} `json:"checks"`
	CurrentEpoch int      `json:"current_epoch"`
	GlobalStep   int64    `json:"global_step"`
	Checkpoints  []string `json:"checkpoints"`
}

func readEpochEndLogs(t *testing.T) epochEndLogs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "lightning", "epoch_end_logs", "epoch_end_logs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out epochEndLogs
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// epochEndLogger is the boring model logging m = epoch + 0.25 in
// OnTrainEpochEnd.
type epochEndLogger struct{ boring }

func (m *epochEndLogger) OnTrainEpochEnd(t *volt.Trainer) error {
	t.Log("m", float64(t.CurrentEpoch())+0.25)
	return nil
}

// logC is a callback (no monitor) logging c = 10 - epoch in OnTrainEpochEnd.
type logC struct{}

func (logC) OnTrainEpochEnd(t *volt.Trainer) error {
	t.Log("c", 10-float64(t.CurrentEpoch()))
	return nil
}

// epochEndSpy records, after the module's OnTrainEpochEnd as EarlyStopping's
// check does (it is a MetricMonitor placed before it), the value of name in
// CallbackMetrics.
type epochEndSpy struct {
	name string
	seen []float64
}

func (s *epochEndSpy) MonitorsMetric() {}

func (s *epochEndSpy) OnTrainEpochEnd(t *volt.Trainer) error {
	if v, ok := t.CallbackMetrics()[s.name]; ok {
		s.seen = append(s.seen, v)
	}
	return nil
}

// TestEpochEndLogReachesMonitorsInTheSameHook: a value logged in
// OnTrainEpochEnd, by the module or by a callback, is what EarlyStopping
// (CheckOnTrainEpochEnd) and ModelCheckpoint read in that same hook, as in
// Lightning, which computes epoch values when callback_metrics is read.
func TestEpochEndLogReachesMonitorsInTheSameHook(t *testing.T) {
	rec := readEpochEndLogs(t)
	for _, name := range []string{"module_logs_m", "callback_logs_c"} {
		t.Run(name, func(t *testing.T) {
			var want epochEndLogRun
			if err := json.Unmarshal(rec.Scenarios[name], &want); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			spy := &epochEndSpy{name: want.Monitor}
			var cbs []volt.Callback
			var m volt.Module = &boring{LR: 0.1}
			if want.Monitor == "c" {
				cbs = append(cbs, logC{})
			} else {
				m = &epochEndLogger{boring{LR: 0.1}}
			}
			cbs = append(cbs, spy,
				callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: want.Monitor, Mode: want.Mode, Patience: 1,
					CheckOnTrainEpochEnd: volt.Ptr(true)}),
				callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Dirpath: dir, Monitor: want.Monitor, Mode: want.Mode,
					SaveTopK: volt.Ptr(-1), Filename: "{epoch}-{" + want.Monitor + ":.2f}"}))
			tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 4, LimitValBatches: volt.Batches(0), Callbacks: cbs,
				DisableCheckpointing: true}))
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Fit(t.Context(), m, boringData()); err != nil {
				t.Fatalf("Fit: %v (Lightning checks %v and stops after epoch %d)", err, want.Checks, want.CurrentEpoch-1)
			}
			var wantSeen []float64
			for _, c := range want.Checks {
				wantSeen = append(wantSeen, c.Value)
			}
			if !slices.Equal(spy.seen, wantSeen) {
				t.Errorf("%s read by the monitors at each OnTrainEpochEnd: %v, Lightning's EarlyStopping checks %v", want.Monitor, spy.seen, wantSeen)
			}
			if got := tr.CurrentEpoch(); got != want.CurrentEpoch {
				t.Errorf("Fit ended at epoch %d, Lightning at %d", got, want.CurrentEpoch)
			}
			if got := tr.GlobalStep(); got != want.GlobalStep {
				t.Errorf("global step %d, Lightning %d", got, want.GlobalStep)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
			}
			if !reflect.DeepEqual(files, want.Checkpoints) {
				t.Errorf("checkpoints %v, Lightning writes %v", files, want.Checkpoints)
			}
		})
	}
}
