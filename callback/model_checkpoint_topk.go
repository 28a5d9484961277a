package callback

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/jsonfloat"
)

// This file is ModelCheckpoint's "which": the top-k bookkeeping that decides
// whether a checkpoint is kept and which one drops out.

// BestModelPath returns the file of the best checkpoint (with no Monitor,
// the latest one); "" before the first save. It implements
// volt.BestModelPather, so FromCheckpoint("best") loads it.
func (m *ModelCheckpoint) BestModelPath() string { return m.state.BestModelPath }

// BestModelScore returns the monitored value of BestModelPath; ok is false
// before the first save or without a Monitor.
func (m *ModelCheckpoint) BestModelScore() (score float64, ok bool) {
	if m.state.BestModelScore == nil {
		return 0, false
	}
	return float64(*m.state.BestModelScore), true
}

// BestKModels returns the kept checkpoints with their monitored values
// (empty without a Monitor).
func (m *ModelCheckpoint) BestKModels() map[string]float64 {
	out := make(map[string]float64, len(m.state.BestKModels))
	for _, e := range m.state.BestKModels {
		out[e.Path] = float64(e.Score)
	}
	return out
}

// KthBestModelPath returns the worst of the kept checkpoints once SaveTopK
// files are kept (the one the next better checkpoint replaces); "" before.
func (m *ModelCheckpoint) KthBestModelPath() string { return m.state.KthBestModelPath }

// LastModelPath returns the path of last.ckpt once written ("" before or
// without SaveLast).
func (m *ModelCheckpoint) LastModelPath() string { return m.state.LastModelPath }

// saveTopK writes a checkpoint if it makes the top k, removing the one it
// pushes out, and returns its path ("" when nothing was written).
func (m *ModelCheckpoint) saveTopK(t *volt.Trainer, candidates map[string]float64) (string, error) {
	if m.cfg.Monitor == "" {
		return m.saveLatest(t, candidates)
	}
	current, ok := candidates[m.cfg.Monitor]
	if !ok {
		return "", m.missingMonitor(t, candidates)
	}
	if math.IsNaN(current) {
		current = math.Inf(1) // never better than anything
		if m.cfg.Mode == "max" {
			current = math.Inf(-1)
		}
	}
	if !m.makesTopK(current) {
		if m.cfg.Verbose {
			t.Slog().Info(fmt.Sprintf("volt: ModelCheckpoint: epoch %d, global step %d: %q was not in top %d",
				t.CurrentEpoch(), t.GlobalStep(), m.cfg.Monitor, m.topK))
		}
		return "", nil
	}
	return m.updateBestAndSave(t, current, candidates)
}

// makesTopK reports whether a checkpoint scoring current is kept.
func (m *ModelCheckpoint) makesTopK(current float64) bool {
	if m.topK == -1 || len(m.state.BestKModels) < m.topK {
		return true
	}
	return m.better(current, float64(*m.state.KthValue))
}

// updateBestAndSave records a checkpoint scoring current, writes it and
// removes the one it replaces.
func (m *ModelCheckpoint) updateBestAndSave(t *volt.Trainer, current float64, candidates map[string]float64) (string, error) {
	s := &m.state
	k := m.topK
	if k == -1 {
		k = len(s.BestKModels) + 1
	}
	var drop string
	if len(s.BestKModels) == k {
		drop = s.KthBestModelPath
		s.BestKModels = slices.DeleteFunc(s.BestKModels, func(e scoredPath) bool { return e.Path == drop })
	}
	path := m.pathFor(candidates, drop)
	if err := t.BroadcastFromRankZero(&path); err != nil {
		return "", err
	}
	s.BestKModels = append(s.BestKModels, scoredPath{Path: path, Score: jsonfloat.Float(current)})
	if len(s.BestKModels) == k {
		kth := m.extreme(func(a, b float64) bool { return m.better(b, a) }) // the worst
		s.KthBestModelPath, s.KthValue = kth.Path, ptrTo(kth.Score)
	}
	best := m.extreme(m.better)
	s.BestModelPath, s.BestModelScore = best.Path, ptrTo(best.Score)
	if m.cfg.Verbose {
		t.Slog().Info(fmt.Sprintf("volt: ModelCheckpoint: epoch %d, global step %d: %q reached %.5f (best %.5f), saving model to %s as top %d",
			t.CurrentEpoch(), t.GlobalStep(), m.cfg.Monitor, current, float64(best.Score), path, k))
	}
	if err := m.write(t, path); err != nil {
		return "", err
	}
	if drop != "" && drop != path {
		if err := m.remove(t, drop); err != nil {
			return "", err
		}
	}
	return path, nil
}

// extreme returns the first kept checkpoint that no later one beats under
// first (so ties go to the earliest, as in Lightning).
func (m *ModelCheckpoint) extreme(first func(a, b float64) bool) scoredPath {
	out := m.state.BestKModels[0]
	for _, e := range m.state.BestKModels[1:] {
		if first(float64(e.Score), float64(out.Score)) {
			out = e
		}
	}
	return out
}

// saveLatest writes a checkpoint without a monitor: the top k are the
// latest k, so with SaveTopK 1 the previous file is replaced (under the same
// name when the name repeats) and with -1 every file is kept.
func (m *ModelCheckpoint) saveLatest(t *volt.Trainer, candidates map[string]float64) (string, error) {
	prev, reuse := m.state.BestModelPath, ""
	if m.topK == 1 {
		reuse = prev
	}
	path := m.pathFor(candidates, reuse)
	if err := t.BroadcastFromRankZero(&path); err != nil {
		return "", err
	}
	m.state.BestModelPath = path
	if m.cfg.Verbose {
		t.Slog().Info(fmt.Sprintf("volt: ModelCheckpoint: epoch %d, global step %d: saving model to %s", t.CurrentEpoch(), t.GlobalStep(), path))
	}
	if err := m.write(t, path); err != nil {
		return "", err
	}
	if m.topK == 1 && prev != "" && prev != path {
		if err := m.remove(t, prev); err != nil {
			return "", err
		}
	}
	return path, nil
}

// missingMonitor handles a monitored metric that was not logged: before
// the first validation of a module that validates it is reported once and
// the top-k save skipped (the metric may be a validation metric); otherwise
// it is an error.
func (m *ModelCheckpoint) missingMonitor(t *volt.Trainer, candidates map[string]float64) error {
	msg := fmt.Sprintf("ModelCheckpoint: monitored metric %q (ModelCheckpointConfig.Monitor) was not logged; available metrics: %s",
		m.cfg.Monitor, metricNames(candidates))
	if _, validates := t.Module().(volt.ValidationStepper); validates && !m.valRan {
		if !m.warned {
			t.Slog().Warn("volt: " + msg + "; no validation has run yet, so the top-k save is skipped")
			m.warned = true
		}
		return nil
	}
	return errors.New(msg)
}

// metricNames lists the metric names, sorted, for messages.
func metricNames(metrics map[string]float64) string {
	names := slices.Sorted(maps.Keys(metrics))
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

func ptrTo[T any](v T) *T { return &v }
