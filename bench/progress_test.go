package bench

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// BenchmarkProgressBar measures what callback.ProgressBar, with its default
// configuration, adds to a step of volt's fit loop on the logistic
// regression (the smallest step, where it weighs most): two fits take turns
// step by step (see lockstepFits), one without a progress bar, one drawing
// the bars as on a terminal into a writer that counts what it gets. One
// iteration is one step of each; it reports the median step time of each
// (none-ns/step, bar-ns/step), the median of the per-turn differences
// (bar-overhead-ns/step), and the writes and bytes the bar wrote per timed
// step: a bar redrawn per batch shows as ≥ 1 write per step.
func BenchmarkProgressBar(b *testing.B) {
	var w countingWriter
	bar := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &w, ForceTerminal: volt.Ptr(true)})
	withBar := runner{callbacks: []volt.Callback{bar}, timed: func() { w = countingWriter{} }}
	times := lockstepFits(b, logReg, []runner{{}, withBar}, numBatches, warmup, b.N)
	diffs := make([]float64, b.N)
	for i := range diffs {
		diffs[i] = times[1][i] - times[0][i]
	}
	b.ReportMetric(median(times[0]), "none-ns/step")
	b.ReportMetric(median(times[1]), "bar-ns/step")
	b.ReportMetric(median(diffs), "bar-overhead-ns/step")
	b.ReportMetric(float64(w.writes)/float64(b.N), "writes/step")
	b.ReportMetric(float64(w.bytes)/float64(b.N), "bytes/step")
}

// countingWriter counts the writes and bytes it is given and drops them.
type countingWriter struct{ writes, bytes int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}
