package engine

import (
	"os"
	"strings"
	"sync"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

// The pure-Go backend of compute v0.1.2 accepts GoMLX's fused Dense op in
// BFloat16 and Float16 while building a graph, then fails to execute it
// ("FusedDense: dtype BFloat16: op not implemented"). GoMLX reads the
// GOMLX_FUSION environment variable while it builds graphs; volt turns fusion
// off around the graphs it builds in those dtypes on that backend.

var fusionMu sync.Mutex

// withoutFusion sets GOMLX_FUSION=0 and returns the function that restores it.
func withoutFusion() (restore func()) {
	fusionMu.Lock()
	old, had := os.LookupEnv(graph.FusionEnv)
	_ = os.Setenv(graph.FusionEnv, "0")
	return func() {
		if had {
			_ = os.Setenv(graph.FusionEnv, old)
		} else {
			_ = os.Unsetenv(graph.FusionEnv)
		}
		fusionMu.Unlock()
	}
}

// NeedsNoFusion reports whether graphs in dtype on the backend configured by
// config ("go", "go:options", …) must be built without fused ops.
func NeedsNoFusion(config string, dtype dtypes.DType) bool {
	name, _, _ := strings.Cut(config, ":")
	return name == DefaultBackend && (dtype == dtypes.BFloat16 || dtype == dtypes.Float16)
}
