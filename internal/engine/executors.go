package engine

import (
	"fmt"
	"strings"
)

// Executor goroutines of graphs run side by side.
//
// The Go backend runs a graph's independent ops side by side on up to
// eight executor goroutines (its DefaultNumExecutors), but no more than
// its worker pool's limit, two slots per core. Each executor holds a slot
// for the whole run, busy or not, and a big op (a matrix product, a 2D
// transpose) splits itself only over the slots left: on two cores three
// of the four slots go to executors, and a matrix product gets one worker
// while the executor that started it waits. With one executor per core
// the other slots are left to the ops' own workers.
// BenchmarkZooBackendModes (examples/internal/speedtable, -modes with
// num_executors=2 against the Go backend's default, the fits taking turns
// in one process) measured at two threads the transformer of
// examples/chargpt at 0.69–0.70× the step, the autoencoder 0.87–0.90×,
// examples/resnet 0.86–0.90×, the MLP 0.90–0.91×, examples/cnn
// 0.90–0.94×, the LSTM 0.96–0.98×; at one thread one executor measured
// 0.97–1.0× (a one-op-at-a-time graph uses no executors).

// maxGoExecutors is the Go backend's own number of executors
// (gobackend.DefaultNumExecutors), which one per core never exceeds.
const maxGoExecutors = 8

// withExecutorsPerCore returns the GoMLX configuration gomlxConfig of the
// Go backend with one executor goroutine per core (cores, at most
// maxGoExecutors) unless it sets num_executors itself.
func withExecutorsPerCore(gomlxConfig string, cores int) string {
	name, options, _ := strings.Cut(gomlxConfig, ":")
	for _, option := range strings.Split(options, ",") {
		if key, _, _ := strings.Cut(option, "="); key == "num_executors" {
			return gomlxConfig
		}
	}
	executors := fmt.Sprintf("num_executors=%d", max(1, min(cores, maxGoExecutors)))
	if options == "" {
		return name + ":" + executors
	}
	return gomlxConfig + "," + executors
}
