package callback

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/voltml/volt/internal/jsonfloat"
)

// This file is ModelCheckpoint's volt.Stateful implementation: the
// bookkeeping a checkpoint carries so that a resumed Fit continues the same
// top k.

// modelCheckpointState is ModelCheckpoint's bookkeeping, as saved. Scores
// are jsonfloat.Floats so that ±Inf, what NaN is recorded as, survives.
type modelCheckpointState struct {
	Monitor        string           `json:"monitor"`
	Dirpath        string           `json:"dirpath"`
	BestModelPath  string           `json:"best_model_path"`
	BestModelScore *jsonfloat.Float `json:"best_model_score"` // nil: none yet
	BestKModels    []scoredPath     `json:"best_k_models"`    // in the order saved
	// KthBestModelPath is the worst kept file once k are kept.
	KthBestModelPath    string           `json:"kth_best_model_path"`
	KthValue            *jsonfloat.Float `json:"kth_value"`
	LastModelPath       string           `json:"last_model_path"`
	LastGlobalStepSaved int64            `json:"last_global_step_saved"`
}

func newModelCheckpointState(monitor string) modelCheckpointState {
	return modelCheckpointState{Monitor: monitor, BestKModels: []scoredPath{}}
}

// scoredPath is a kept checkpoint and its monitored value.
type scoredPath struct {
	Path  string          `json:"path"`
	Score jsonfloat.Float `json:"score"`
}

// StateKey implements volt.Stateful; it names the monitor, the mode and the
// cadence, so two ModelCheckpoints differ unless they would save the same
// files.
func (m *ModelCheckpoint) StateKey() string {
	return fmt.Sprintf("ModelCheckpoint{monitor=%s,mode=%s,every_n_train_steps=%d,every_n_epochs=%d,train_time_interval=%s}",
		m.cfg.Monitor, m.cfg.Mode, m.cfg.EveryNTrainSteps, m.cfg.EveryNEpochs, m.cfg.TrainTimeInterval)
}

// State implements volt.Stateful: the best and kept files with their
// scores, the last file, the directory and the last global step saved.
func (m *ModelCheckpoint) State() ([]byte, error) {
	s := m.state
	s.Dirpath = m.dirpath
	return json.Marshal(s)
}

// LoadState implements volt.Stateful. When the checkpoint was written for
// another directory only best_model_path is restored (as in Lightning), and
// a warning says so when Fit starts.
func (m *ModelCheckpoint) LoadState(b []byte) error {
	s := newModelCheckpointState(m.cfg.Monitor)
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("ModelCheckpoint.LoadState: %w", err)
	}
	m.loaded, m.orphansUpTo = true, -1
	if !sameDir(s.Dirpath, m.dirpath) {
		m.loadWarning = fmt.Sprintf("volt: ModelCheckpoint: the checkpoint's directory %q differs from %q; only best_model_path is restored, the top-k bookkeeping starts fresh",
			s.Dirpath, m.dirpath)
		fresh := newModelCheckpointState(m.cfg.Monitor)
		fresh.BestModelPath, fresh.LastGlobalStepSaved = s.BestModelPath, s.LastGlobalStepSaved
		m.state = fresh
		return nil
	}
	if s.BestKModels == nil {
		s.BestKModels = []scoredPath{}
	}
	m.state, m.orphansUpTo = s, s.LastGlobalStepSaved
	return nil
}

// sameDir reports whether two directory names denote the same directory.
func sameDir(a, b string) bool {
	abs := func(p string) string {
		if q, err := filepath.Abs(p); err == nil {
			return q
		}
		return filepath.Clean(p)
	}
	return abs(a) == abs(b)
}
