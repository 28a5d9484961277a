//go:build xla

package engine

// Built with -tags xla, volt also offers GoMLX's XLA backend:
// Config.Backend or GOMLX_BACKEND = "xla:/abs/path/to/pjrt_plugin.so" (or a
// plugin name that go-xla finds). It needs cgo and a PJRT plugin at run time.
import _ "github.com/gomlx/go-xla/compute/xla"
