package main

import (
	"fmt"
	"io"
)

// runCkpt executes "volt ckpt SUBCOMMAND ...".
func runCkpt(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "ckpt needs a subcommand (valid: inspect)")
	}
	switch args[0] {
	case "inspect":
		if len(args) != 2 {
			return usageError(stderr, "ckpt inspect needs exactly one FILE, got %d arguments", len(args)-1)
		}
		if err := inspect(args[1], stdout); err != nil {
			fmt.Fprintf(stderr, "volt: %v\n", err)
			return exitError
		}
		return exitOK
	}
	return usageError(stderr, "unknown ckpt subcommand %q (valid: inspect)", args[0])
}
