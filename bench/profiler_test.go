package bench

import (
	"io"
	"testing"

	"github.com/voltml/volt/profiler"
)

// BenchmarkProfiler times a step of volt's fit loop on the logistic
// regression (the smallest step, where what volt adds per step shows
// most) with each profiler. profiler=off is BenchmarkLogReg/loop=volt:
// compare it with main's loop with benchstat to see that a profiler costs
// nothing when off.
func BenchmarkProfiler(b *testing.B) {
	for _, name := range []string{"off", "simple", "advanced", "trace"} {
		b.Run("profiler="+name, func(b *testing.B) {
			cfg := trainerConfig("", 0)
			cfg.DefaultRootDir = b.TempDir() // the profilers' files
			switch name {
			case "off":
			case "simple":
				cfg.CustomProfiler = &profiler.Simple{Out: io.Discard}
			default:
				cfg.Profiler = name
			}
			benchVoltConfig(b, logReg, batches(), cfg)
		})
	}
}
