//go:build xla

package engine

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gomlx/go-xla/pjrt"
)

// XLABuilt reports whether this program links GoMLX's XLA backend (built
// with -tags xla).
const XLABuilt = true

// findGPUPlugin returns the name of the first CUDA (then ROCm) PJRT plugin
// go-xla finds, or an error naming what was looked for and where.
func findGPUPlugin() (string, error) {
	found := pjrt.AvailablePlugins()
	names := make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, isGPU := range []func(string) bool{pjrt.IsCUDAName, pjrt.IsROCMName} {
		for _, name := range names {
			if isGPU(name) {
				return name, nil
			}
		}
	}
	where := "the default directories"
	if paths := os.Getenv(pjrt.PJRTPluginPathsEnv); paths != "" {
		where = pjrt.PJRTPluginPathsEnv + "=" + paths
	}
	return "", fmt.Errorf("no CUDA or ROCm PJRT plugin found in %s (plugins found: [%s]); install %s",
		where, strings.Join(names, " "), gpuPluginHint())
}
