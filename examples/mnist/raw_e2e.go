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
	// Package initialisation runs locked to the main OS thread
	// (runtime.main), where every wait inside a step becomes a thread
	// switch: the loop ran a third slower there. It gets a goroutine of
	// its own, as main's code does.
	done := make(chan error)
	go func() { done <- rawloop.Run(os.Args[1:], os.Stdout, os.Stderr) }()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "rawloop:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
