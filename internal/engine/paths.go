package engine

import "strings"

// Prefix is the store scope of volt's own variables: optimizer state,
// accumulators, float32 masters, metric state, weight averages.
const Prefix = "/volt/"

// ModuleVariable reports whether path names one of the module's variables:
// not volt's own (under Prefix) and not GoMLX's internals (a name starting
// with "#", such as the random-number state "/#rngState").
func ModuleVariable(path string) bool {
	return !strings.HasPrefix(path, Prefix) && !strings.HasPrefix(path[strings.LastIndex(path, "/")+1:], "#")
}
