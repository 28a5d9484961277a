// Command warn warns twice as two NewTrainer calls would, for
// TestWarningOfABuildWithoutSIMD: a build without GOEXPERIMENT=simd must
// warn once, on stderr.
package main

import (
	"fmt"
	"log/slog"

	"github.com/voltml/volt/internal/simdcheck"
)

func main() {
	for range 2 {
		simdcheck.WarnOnce(slog.Default(), "go:ops_sequential")
	}
	fmt.Println("ok")
}
