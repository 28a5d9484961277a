package volt_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
)

// TestLoopPointText: the checkpoint holds a point as text, the names of
// volt 0.1.0's Stage strings unchanged (its checkpoints load), and an
// unknown name is an error listing the valid ones.
func TestLoopPointText(t *testing.T) {
	for _, tc := range []struct {
		text string
		want volt.LoopPoint
	}{
		{"", volt.PointNone}, {"train_epoch_start", volt.PointTrainEpochStart}, {"train_batch_start", volt.PointTrainBatchStart},
		{"train_batch_end", volt.PointTrainBatchEnd}, {"validate_epoch_end", volt.PointValidationEpochEnd},
		{"validate_end", volt.PointValidationEnd}, {"train_epoch_end", volt.PointTrainEpochEnd},
		{"test_epoch_end", volt.PointTestEpochEnd}, {"test_end", volt.PointTestEnd},
		{"sanity_check_epoch_end", volt.PointSanityCheckEpochEnd}, {"sanity_check_end", volt.PointSanityCheckEnd},
	} {
		var p volt.Progress
		if err := json.Unmarshal([]byte(`{"version":1,"stage":"`+tc.text+`"}`), &p); err != nil || p.At != tc.want {
			t.Errorf("stage %q decodes to %v (%v), want %v", tc.text, p.At, err, tc.want)
		}
		b, err := json.Marshal(p)
		if err != nil || !strings.Contains(string(b), `"stage":"`+tc.text+`"`) {
			t.Errorf("%v encodes to %s (%v), want stage %q", tc.want, b, err, tc.text)
		}
	}
	var p volt.Progress
	err := json.Unmarshal([]byte(`{"stage":"train_batch_middle"}`), &p)
	if err == nil || !strings.Contains(err.Error(), `unknown point "train_batch_middle"; valid: "" and "train_epoch_start", "train_batch_start"`) {
		t.Errorf("unknown stage: error %v", err)
	}
}

// TestResumePointFollowsTheRecordedPoint checks where a checkpoint says a
// resumed Fit continues, for a save at each kind of boundary (3 epochs of 8
// batches, validation at each epoch's end).
func TestResumePointFollowsTheRecordedPoint(t *testing.T) {
	type point struct {
		Epoch          int  `json:"epoch"`
		Batch          int  `json:"batch"`
		ValidationDone bool `json:"validation_done"`
	}
	tests := []struct {
		when    string
		atBatch int64
		want    point
	}{
		{"sanity check", 0, point{}},
		{"batch", 5, point{Epoch: 0, Batch: 5}},
		{"batch", 8, point{Epoch: 0, Batch: 8}},
		{"validation", 8, point{Epoch: 0, Batch: 8, ValidationDone: true}},
		{"epoch", 16, point{Epoch: 2}},
		{"train end", 24, point{Epoch: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.when, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "point.ckpt")
			mem := &memLogger{}
			sv := &saver{path: path, atBatch: tc.atBatch, when: tc.when, mem: mem}
			cfg := quiet(volt.Config{MaxEpochs: 3, Callbacks: []volt.Callback{sv}, Loggers: []logger.Logger{mem}})
			cfg.DisableLoggers = false
			testutil.Fit(t, cfg, &adamBoring{}, resumeData())
			f, err := checkpoint.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Resume point `json:"resume"`
			}
			if err := json.Unmarshal(f.State, &st); err != nil {
				t.Fatal(err)
			}
			if st.Resume != tc.want {
				t.Errorf("saved at %s after batch %d: resume point %+v, want %+v", tc.when, tc.atBatch, st.Resume, tc.want)
			}
		})
	}
}
