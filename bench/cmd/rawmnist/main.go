// Command rawmnist runs bench/rawloop, the MNIST example's run written with
// GoMLX alone, as a program of its own.
//
//	GOEXPERIMENT=simd go run ./bench/cmd/rawmnist -epochs 1
package main

import (
	"fmt"
	"os"

	"github.com/voltml/volt/bench/rawloop"
)

func main() {
	if err := rawloop.Run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "rawmnist:", err)
		os.Exit(1)
	}
}
