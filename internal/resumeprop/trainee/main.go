// Command trainee runs one part of a resumeprop scenario (see
// resumeprop.Child for the flags): the property test builds it with
// -tags mpi and launches it under mpirun for its 2-rank cases.
package main

import (
	"fmt"
	"os"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/resumeprop"
)

func main() {
	code := resumeprop.Child(os.Args[1:], os.Stdout, os.Stderr)
	// MPI must be finalized before a rank exits, or mpirun reports the
	// job as failed.
	if err := volt.FinalizeDistributed(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "trainee:", err)
		code = 1
	}
	os.Exit(code)
}
