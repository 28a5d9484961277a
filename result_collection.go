package volt

// This file is the accumulation stage of the logging pipeline (logging.go):
// a loop's result collection (Lightning's _ResultCollection), one metric per
// logged name, adding step values and reducing them to epoch values.

import (
	"fmt"
	"math"
	"strings"
)

// metric accumulates one logged name over an epoch of a loop.
type metric struct {
	key  string // name, with the dataloader suffix when there are several loaders
	opts logOptions
	// stepKey and epochKey are the names of the step and epoch values: both
	// get a suffix only when the value is logged both ways.
	stepKey, epochKey string
	seen              bool // logged since the last reset
	fresh             bool // logged since the last step row was written
	step              float64
	sum               float64 // weighted sum (Mean) or plain sum (Sum)
	weight            float64
	min               float64
	max               float64
	// src is set for a metric object (Step.LogMetric): its values come from
	// the carried state, member names its value in src; epoch is the last
	// epoch value computed (results.computeMetrics).
	src    *metricSource
	member string
	epoch  float64
	// restoredObject is set for a metric object restored from a checkpoint
	// (src is nil until a step of this run logs it).
	restoredObject bool
}

// isObject reports whether m is a metric object's (Step.LogMetric).
func (m *metric) isObject() bool { return m.src != nil || m.restoredObject }

// newMetric returns an empty metric for key. As in Lightning, a dataloader
// suffix stays last: val_loss_step/dataloader_idx_1.
func newMetric(key string, opts logOptions) *metric {
	m := &metric{key: key, opts: opts, stepKey: key, epochKey: key}
	if opts.onStep && opts.onEpoch {
		name, suffix := key, ""
		if i := strings.LastIndex(key, "/dataloader_idx_"); i >= 0 {
			name, suffix = key[:i], key[i:]
		}
		m.stepKey, m.epochKey = name+"_step"+suffix, name+"_epoch"+suffix
	}
	return m
}

// add accumulates one step value, weighted by batchSize for Mean.
func (m *metric) add(v float64, batchSize int) {
	if !m.seen {
		m.seen, m.sum, m.weight, m.min, m.max = true, 0, 0, math.Inf(1), math.Inf(-1)
	}
	m.fresh = true
	m.step = v
	w := float64(max(batchSize, 1))
	if m.opts.reduce == Sum {
		m.sum += v
	} else {
		m.sum += v * w
	}
	m.weight += w
	m.min = min(m.min, v)
	m.max = max(m.max, v)
}

// epochValue is the epoch's reduction of the step values (a metric
// object's: its last computed value).
func (m *metric) epochValue() float64 {
	if m.src != nil {
		return m.epoch
	}
	switch m.opts.reduce {
	case Sum:
		return m.sum
	case Min:
		return m.min
	case Max:
		return m.max
	default:
		return m.sum / m.weight
	}
}

// results holds the metrics of one loop (training, or one evaluation run).
type results struct {
	byKey map[string]*metric
	order []*metric
	// stepLogged says some metric goes to the loggers per step, so an
	// evaluation loop has step rows to send after each batch.
	stepLogged bool
	// ended is set once the epoch's values are published to the epoch-end
	// hooks (logging.publishEpochValues) until the next reset: an epoch
	// value logged then is published at once (Trainer.Log), as Lightning
	// computes epoch values whenever callback_metrics is read.
	ended bool
}

// newResults returns an empty result collection.
func newResults() *results { return &results{byKey: map[string]*metric{}} }

// entry returns the metric for key, creating it; logging one name with two
// different option sets is an error.
func (r *results) entry(key string, opts logOptions) (*metric, error) {
	if m, ok := r.byKey[key]; ok {
		if m.opts != opts {
			return nil, fmt.Errorf("metric %q is logged with different options in different places", key)
		}
		return m, nil
	}
	m := newMetric(key, opts)
	r.stepLogged = r.stepLogged || (opts.onStep && opts.logger)
	r.byKey[key] = m
	r.order = append(r.order, m)
	return m, nil
}

// bind returns the metrics of a trace's logged values (Step.Log), in the
// order of the step's outputs, creating their entries: the names get the
// suffix of loader of numLoaders.
func (r *results) bind(logs []stepLog, loader, numLoaders int) ([]*metric, error) {
	ms := make([]*metric, len(logs))
	for i, l := range logs {
		m, err := r.entry(l.name+dataloaderSuffix(loader, numLoaders), l.opts)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	return ms, nil
}

// stepValues adds to out the step values logged since the last call that go
// to the loggers, and marks every value as sent. The step values of metric
// objects are computed here, only when they are sent.
func (r *results) stepValues(out map[string]float64) error {
	for _, m := range r.order {
		if out != nil && m.fresh && m.opts.onStep && m.opts.logger {
			if m.src != nil {
				if err := m.computeStepValue(); err != nil {
					return err
				}
			}
			out[m.stepKey] = m.step
		}
		m.fresh = false
	}
	return nil
}

// reset forgets the values of an epoch; entries stay so compiled steps can
// keep pointers to them.
func (r *results) reset() {
	r.ended = false
	for _, m := range r.order {
		m.seen, m.fresh = false, false
		if m.src != nil {
			m.src.resetState()
		}
	}
}

// epochValues adds every epoch value to out (under its epoch name, and its
// plain name too when it is also logged per step), those that go to the
// loggers to forLogger, and passes those shown in the progress bar to progBar
// (either may be nil), in logging order.
func (r *results) epochValues(out map[string]float64, forLogger map[string]float64, progBar func(key string, v float64)) {
	for _, m := range r.order {
		m.epochValueTo(out, forLogger, progBar)
	}
}

// epochValueTo adds m's epoch value to out, forLogger and progBar as
// results.epochValues does, if m has one.
func (m *metric) epochValueTo(out, forLogger map[string]float64, progBar func(key string, v float64)) {
	if !m.seen || !m.opts.onEpoch {
		return
	}
	v := m.epochValue()
	out[m.epochKey] = v
	if m.opts.onStep {
		out[m.key] = v
	}
	if forLogger != nil && m.opts.logger {
		forLogger[m.epochKey] = v
	}
	if progBar != nil && m.opts.progBar {
		progBar(m.epochKey, v)
	}
}

// dataloaderSuffix is appended to evaluation metric names when a run has
// several loaders, as Lightning does; idx -1 (no loader's batch) has none.
func dataloaderSuffix(idx, numLoaders int) string {
	if numLoaders <= 1 || idx < 0 {
		return ""
	}
	return fmt.Sprintf("/dataloader_idx_%d", idx)
}

// belongsToLoader reports whether key belongs to loader idx (or to none).
func belongsToLoader(key string, idx int) bool {
	i := strings.LastIndex(key, "/dataloader_idx_")
	if i < 0 {
		return true
	}
	return key[i:] == fmt.Sprintf("/dataloader_idx_%d", idx)
}
