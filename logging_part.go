package volt

// This file is the logging's state part: the training loop's logged values
// and metric objects accumulated over the epoch in progress, and the
// latest values, so that a run resumed mid-epoch logs what one that never
// stopped does.

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/jsonfloat"
)

// metricState is a metric's epoch accumulator, saved so that a run resumed
// mid-epoch logs the same epoch values as one that never stopped.
type metricState struct {
	Key     string    `json:"key"`
	OnStep  bool      `json:"on_step"`
	OnEpoch bool      `json:"on_epoch"`
	ProgBar bool      `json:"prog_bar"`
	Logger  bool      `json:"logger"`
	Reduce  Reduction `json:"reduce"`
	Seen    bool      `json:"seen"`
	Fresh   bool      `json:"fresh,omitempty"`
	// Object is set for a metric object (Step.LogMetric), whose step value
	// reaches the callbacks when it is sent to the loggers.
	Object bool            `json:"object,omitempty"`
	Step   jsonfloat.Float `json:"step"`
	Sum    jsonfloat.Float `json:"sum"`
	Weight jsonfloat.Float `json:"weight"`
	Min    jsonfloat.Float `json:"min"`
	Max    jsonfloat.Float `json:"max"`
}

func (*logging) stateKey() string { return "logging" }

func (*logging) members() []string {
	return []string{"train_metrics", "callback_metrics", "logged_metrics", "progress_bar_metrics"}
}

// save adds the training accumulators (their metric objects' carried
// state as tensors) and the latest values.
func (l *logging) save(st *stateDoc) error {
	if err := l.trainRes.computeMetrics(l.trainMetrics); err != nil {
		return err
	}
	var train []metricState
	for _, m := range l.trainRes.order {
		// A metric object's step value is computed when it is sent: one
		// still to be sent (a checkpoint taken in OnTrainBatchEnd) is
		// computed now, from the batch's state, which the checkpoint does
		// not hold.
		if m.src != nil && m.fresh && m.opts.onStep {
			if err := m.computeStepValue(); err != nil {
				return err
			}
		}
		train = append(train, metricState{
			Key: m.key, OnStep: m.opts.onStep, OnEpoch: m.opts.onEpoch, ProgBar: m.opts.progBar,
			Logger: m.opts.logger, Reduce: m.opts.reduce, Seen: m.seen, Fresh: m.fresh, Object: m.isObject(),
			Step: jsonfloat.Float(m.step), Sum: jsonfloat.Float(m.sum), Weight: jsonfloat.Float(m.weight), Min: jsonfloat.Float(m.min), Max: jsonfloat.Float(m.max),
		})
	}
	for _, m := range []struct {
		member string
		value  any
	}{{"train_metrics", train}, {"callback_metrics", toJSONFloats(l.callbackMetrics)}, {"logged_metrics", toJSONFloats(l.loggedMetrics)},
		{"progress_bar_metrics", toJSONFloats(l.progressBarMetrics)}} {
		if err := st.putNonEmpty(m.member, m.value); err != nil {
			return err
		}
	}
	for key, val := range l.metricStateTensors() {
		st.tensors[metricStatePrefix+key] = val
	}
	return nil
}

// load restores the training accumulators, the metric objects' carried
// state and the latest values.
func (l *logging) load(st *stateDoc) error {
	carried := map[string]*tensors.Tensor{}
	for name, val := range st.tensors {
		if key, ok := strings.CutPrefix(name, metricStatePrefix); ok {
			carried[key] = val
		}
	}
	if err := l.trainMetrics.carry.Restore(carried); err != nil {
		return fmt.Errorf("checkpoint %s: %w", st.path, err)
	}
	var train []metricState
	var callback, logged, progBar map[string]jsonfloat.Float
	for _, m := range []struct {
		member string
		value  any
	}{{"train_metrics", &train}, {"callback_metrics", &callback}, {"logged_metrics", &logged}, {"progress_bar_metrics", &progBar}} {
		if _, err := st.get(m.member, m.value); err != nil {
			return err
		}
	}
	l.trainRes = newResults()
	for _, ms := range train {
		m, err := l.trainRes.entry(ms.Key, logOptions{onStep: ms.OnStep, onEpoch: ms.OnEpoch, progBar: ms.ProgBar, logger: ms.Logger, reduce: ms.Reduce})
		if err != nil {
			return err
		}
		m.seen, m.fresh, m.restoredObject = ms.Seen, ms.Fresh, ms.Object
		m.step, m.sum, m.weight, m.min, m.max = float64(ms.Step), float64(ms.Sum), float64(ms.Weight), float64(ms.Min), float64(ms.Max)
	}
	l.callbackMetrics, l.loggedMetrics, l.progressBarMetrics = fromJSONFloats(callback), fromJSONFloats(logged), fromJSONFloats(progBar)
	return nil
}
