package bench

import (
	"slices"
	"testing"
)

// intraOpModes are the Go backend's ops_sequential mode with its
// intra-op parallelism off (parallelism=1: every op on one core) and at
// its default (DotGeneral, convolutions, large transposes and some
// unary ops split over up to GOMAXPROCS goroutines).
var intraOpModes = []struct{ name, config string }{
	{"oneCore", "go:ops_sequential,parallelism=1"},
	{"split", "go:ops_sequential"},
}

// BenchmarkIntraOpParallelism measures what splitting an op over the
// cores buys at the process's GOMAXPROCS: volt's fit loop on the MNIST MLP
// and the small CNN, once per mode in lockstep as in
// BenchmarkBackendModes. It reports each mode's median and 90th-percentile
// step time (oneCore-ns/step, split-p90-ns/step, ...) and the median of the
// per-turn ratios split/oneCore (below 1: splitting pays). Run it with
// GOMAXPROCS=2 (or more): at 1 both modes are the same. On a machine whose
// cores other processes share, an op split over the cores waits for its
// slowest part, which shows as a longer tail (p90) of the split mode.
func BenchmarkIntraOpParallelism(b *testing.B) {
	for _, m := range []struct {
		name    string
		net     net
		batches int
		warmup  int
	}{
		{"mlp", mlp, numBatches, warmup},
		{"cnn", cnn, 2, 1},
	} {
		b.Run("model="+m.name, func(b *testing.B) {
			runners := make([]runner, len(intraOpModes))
			for i, mode := range intraOpModes {
				runners[i] = runner{config: mode.config}
			}
			times := lockstepFits(b, m.net, runners, m.batches, m.warmup, b.N)
			ratios := make([]float64, b.N)
			for i := range ratios {
				ratios[i] = times[1][i] / times[0][i]
			}
			for i, mode := range intraOpModes {
				b.ReportMetric(median(times[i]), mode.name+"-ns/step")
				b.ReportMetric(quantile(times[i], 0.9), mode.name+"-p90-ns/step")
			}
			b.ReportMetric(median(ratios), "split/oneCore")
		})
	}
}

// quantile returns the q-quantile (0..1) of xs, nearest rank, sorting xs.
func quantile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	i := int(q*float64(len(xs)-1) + 0.5)
	return xs[i]
}
