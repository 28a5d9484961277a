// Package cmdexit ends the examples' main functions as command-line tools
// end: status 0 after -h or -help (the flag package printed the usage), 1
// after an error, which is printed first.
package cmdexit

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// Code returns the exit status for a run's error: 0 for nil and for
// flag.ErrHelp, 1 otherwise.
func Code(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

// Exit prints "name: err" to stderr and exits with status 1 when err is an
// error other than flag.ErrHelp; otherwise it returns.
func Exit(name string, err error) {
	if Code(err) == 0 {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	os.Exit(1)
}
