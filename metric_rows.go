package volt

// This file keeps the growing (ReduceCat) states of the metric objects
// logged in validation and test steps: the scores and labels of exact
// curves (ROC, precision-recall, AUROC, average precision) and CatMetric's
// values. Their rows are outputs of the compiled step, copied to the host
// after each batch and appended to a metrics.State, which holds them in
// chunks of metrics.ChunkRows rows: appending never copies what is already
// held, and Compute concatenates them once, at the epoch's end. The memory
// grows with the epoch (every score is kept until Compute); the binned form
// of the curve metrics (thresholds) has a fixed-size state carried in the
// step instead.

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/metrics"
)

// rowsOf returns the host state holding the rows of src's growing states,
// shared by the sources of the same metric in every graph of the table's
// programs.
func (tb *metricTable) rowsOf(src *metricSource) *metrics.State {
	key := src.stateKeys[0]
	if r, ok := tb.rows[key]; ok {
		return r
	}
	st, err := metrics.NewState(src.updater)
	if err != nil {
		panic(fmt.Sprintf("metric %v: %v", src.names, err)) // checked by the caller already
	}
	tb.rows[key] = st
	return st
}

// rowNodes returns the nodes of the rows the metric sources of a step
// append, in order: extra outputs of the step.
func rowNodes(srcs []*metricSource) []*graph.Node {
	var out []*graph.Node
	for _, src := range srcs {
		out = append(out, src.rowNodes...)
	}
	return out
}

// appendMetricRows appends a run's row outputs (rowNodes' tensors) to the
// host state of graph gid's metric sources.
func (tb *metricTable) appendMetricRows(gid graph.GraphId, outs []*tensors.Tensor) error {
	k := 0
	for _, src := range tb.logs[gid] {
		for _, i := range src.catIdx {
			if k >= len(outs) {
				return fmt.Errorf("metric %v: the step returned %d row tensors, fewer than its growing states", src.names, len(outs))
			}
			if err := src.rows.Append(i, outs[k]); err != nil {
				return fmt.Errorf("metric %v: %w", src.names, err)
			}
			k++
		}
	}
	return nil
}
