package volt

import (
	"maps"
	"slices"
)

// setProgressBar records a progress bar value, remembering the order in
// which the keys were first logged.
func (l *logging) setProgressBar(key string, v float64) {
	if _, ok := l.progressBarMetrics[key]; !ok && !slices.Contains(l.progressBarOrder, key) {
		l.progressBarOrder = append(l.progressBarOrder, key)
	}
	l.progressBarMetrics[key] = v
}

// progressBarKeys returns ProgressBarMetrics' keys in logging order, as
// Lightning's progress bar shows them: those logged in this run in the order
// first logged, then any others (restored from a checkpoint, which keeps
// the values only) sorted by name.
func (t *Trainer) progressBarKeys() []string {
	m := t.logs.progressBarMetrics
	keys := make([]string, 0, len(m))
	listed := map[string]bool{}
	for _, k := range t.logs.progressBarOrder {
		if _, ok := m[k]; ok && !listed[k] {
			keys, listed[k] = append(keys, k), true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !listed[k] {
			keys = append(keys, k)
		}
	}
	return keys
}
