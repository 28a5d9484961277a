package volt

import (
	"fmt"

	"github.com/voltml/volt/metrics"
)

// MetricValue returns the value of the metric object logged or updated
// under name (Step.LogMetric, LogMetrics, UpdateMetric), computed from the
// state accumulated so far in the current epoch of its loop, or in the last
// one when its loop has ended: in an epoch-end hook, or after Validate or
// Test, it is the epoch's value. With several evaluation loaders, name
// carries the loader suffix ("val_roc/dataloader_idx_1"). In a
// data-parallel job the states of every metric object are reduced across
// ranks at the end of its loop's epoch (summed, or gathered in rank order
// for growing states, as torchmetrics syncs them), so the value there and
// after the run covers every rank's shard, on every rank; inside an epoch
// it covers this rank's batches so far. It is an error
// when no step has logged a metric object under name since its loop's last
// reset.
func (t *Trainer) MetricValue(name string) (metrics.Value, error) {
	for _, res := range t.metricResults() {
		m, ok := res.byKey[name]
		if !ok || m.src == nil {
			continue
		}
		if !m.seen {
			return metrics.Value{}, fmt.Errorf("volt: MetricValue(%q): no step has updated it since its loop started", name)
		}
		vals, err := m.src.values(false)
		if err != nil {
			return metrics.Value{}, fmt.Errorf("volt: MetricValue(%q): %w", name, err)
		}
		return vals[m.member], nil
	}
	return metrics.Value{}, fmt.Errorf("volt: MetricValue(%q): no metric object is logged under that name (Step.LogMetric, LogMetrics or UpdateMetric)", name)
}

// metricResults returns the result collections MetricValue searches: the
// running loop's first, then training, validation and test.
func (t *Trainer) metricResults() []*results {
	var out []*results
	if t.run.res != nil {
		out = append(out, t.run.res)
	}
	if t.logs.trainRes != nil {
		out = append(out, t.logs.trainRes)
	}
	for _, stage := range []RunningStage{RunningValidate, RunningTest} {
		if l := t.perModule.evalLoops[stage]; l != nil {
			out = append(out, l.res)
		}
	}
	return out
}
