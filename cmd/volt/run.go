package main

import (
	"fmt"
	"io"
)

// Exit codes of volt.
const (
	exitOK    = 0 // success
	exitError = 1 // the command failed (unreadable or corrupted checkpoint, …)
	exitUsage = 2 // the command line is wrong
)

// usage is the help text.
const usage = `volt: tools for volt training runs.

Usage:
  volt ckpt inspect FILE   show a checkpoint: format, volt version, checksum
                           status, trainer state and tensors
  volt report DIR...       one HTML page of plots of the metrics of runs
                           (volt report -h for its flags)
  volt help                show this help

Exit status: 0 on success, 1 when the command fails (for example a missing,
truncated or corrupted checkpoint), 2 on a usage error.
`

// run executes the command line args (without the program name), writing
// results to stdout and diagnostics to stderr, and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "ckpt":
		return runCkpt(args[1:], stdout, stderr)
	case "report":
		return runReport(args[1:], stdout, stderr)
	}
	return usageError(stderr, "unknown command %q", args[0])
}

// usageError reports a wrong command line and returns exitUsage.
func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "volt: "+format+"\n\n", args...)
	fmt.Fprint(stderr, usage)
	return exitUsage
}
