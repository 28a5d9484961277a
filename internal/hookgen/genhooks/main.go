// Command genhooks writes volt's hook_table_gen.go, the hook table's rows
// for the hooks of hooks.go, from hooks.go (internal/hookgen), in the
// current directory: "go generate" runs it in the module's root. volt's
// TestHookTableIsCurrent fails while the file is stale.
package main

import (
	"fmt"
	"os"

	"github.com/voltml/volt/internal/hookgen"
)

func main() {
	if err := hookgen.Write("."); err != nil {
		fmt.Fprintln(os.Stderr, "genhooks:", err)
		os.Exit(1)
	}
}
