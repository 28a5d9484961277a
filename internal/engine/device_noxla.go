//go:build !xla

package engine

import "errors"

// XLABuilt reports whether this program links GoMLX's XLA backend (built
// with -tags xla).
const XLABuilt = false

// findGPUPlugin needs the XLA backend, which this build lacks.
func findGPUPlugin() (string, error) {
	return "", errors.New("built without -tags xla")
}
