// Command trainee runs one part of a resumeprop scenario (see
// resumeprop.Child for the flags): the property test builds it with
// -tags mpi and launches it under mpirun for its 2-rank cases.
package main

import (
	"os"

	"github.com/voltml/volt/internal/resumeprop"
)

func main() { os.Exit(resumeprop.Child(os.Args[1:], os.Stdout, os.Stderr)) }
