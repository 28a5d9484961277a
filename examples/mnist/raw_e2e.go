//go:build e2ebench

// This file is for bench/mnist_e2e.sh only: built with -tags e2ebench, the
// example runs bench/rawloop (the same training written with GoMLX alone)
// instead of itself when VOLT_E2E_RAW=1, so that the benchmark compares the
// two loops inside one binary.

package main

import (
	"fmt"
	"os"

	"github.com/voltml/volt/bench/rawloop"
)

func init() {
	if os.Getenv("VOLT_E2E_RAW") != "1" {
		return
	}
	if err := rawloop.Run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "rawloop:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
