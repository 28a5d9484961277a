package bench

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// BenchmarkProgressBar measures what callback.ProgressBar, with its default
// configuration, adds to a step of volt's fit loop on the logistic
// regression (the smallest step, where it weighs most): bar=none has no
// progress bar, bar=terminal draws the bars as on a terminal into a writer
// that counts what it gets. It reports writes/step and bytes/step besides
// the step time, so a bar redrawn per batch shows as ≥ 1 write per step.
func BenchmarkProgressBar(b *testing.B) {
	b.Run("bar=none", func(b *testing.B) { benchVolt(b, logReg, batches()) })
	b.Run("bar=terminal", func(b *testing.B) {
		var w countingWriter
		bar, err := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &w, ForceTerminal: volt.Ptr(true)})
		if err != nil {
			b.Fatal(err)
		}
		benchVolt(b, logReg, batches(), bar)
		b.ReportMetric(float64(w.writes)/float64(b.N), "writes/step")
		b.ReportMetric(float64(w.bytes)/float64(b.N), "bytes/step")
	})
}

// countingWriter counts the writes and bytes it is given and drops them.
type countingWriter struct{ writes, bytes int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}
