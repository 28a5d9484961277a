package engine

import (
	"fmt"
	"slices"
	"strings"
)

// OpsByGraph is volt's option of the Go backend's configuration
// ("go:ops_by_graph", DefaultBackend): ops side by side in graphs with a
// convolution, or with large matrix products when there is more than one
// core, one at a time in the others (fastconv's ChooseOpsModePerGraph). GoMLX does not know it: Backend takes
// it out of the configuration it hands to GoMLX.
const OpsByGraph = "ops_by_graph"

// withoutOpsByGraph returns config without the OpsByGraph option and
// whether it had it. An OpsByGraph beside the modes it chooses between
// (ops_sequential, ops_parallel), or on another backend than "go", is an
// error.
func withoutOpsByGraph(config string) (string, bool, error) {
	name, options, _ := strings.Cut(config, ":")
	list := strings.Split(options, ",")
	if !slices.Contains(list, OpsByGraph) {
		return config, false, nil
	}
	if name != "go" {
		return "", false, fmt.Errorf("backend %q: %s is an option of the go backend only", config, OpsByGraph)
	}
	for _, mode := range []string{"ops_sequential", "ops_parallel"} {
		if slices.Contains(list, mode) {
			return "", false, fmt.Errorf("backend %q: %s chooses between ops_sequential and ops_parallel per graph; "+
				"name one of the three", config, OpsByGraph)
		}
	}
	list = slices.DeleteFunc(list, func(o string) bool { return o == OpsByGraph })
	if len(list) == 0 {
		return name, true, nil
	}
	return name + ":" + strings.Join(list, ","), true, nil
}
