// Command genhooks writes volt's hook_table_gen.go, the hook table's rows
// for the hooks of hooks.go, from hooks.go (internal/hookgen). Run it with
// "go generate" in the module's root after changing hooks.go; volt's
// TestHookTableIsCurrent fails while the file is stale.
package main

import (
	"fmt"
	"os"

	"github.com/voltml/volt/internal/hookgen"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genhooks HOOKS_GO OUTPUT_GO")
		os.Exit(2)
	}
	src, err := os.ReadFile(os.Args[1])
	if err == nil {
		var out []byte
		if out, err = hookgen.Generate(os.Args[1], src); err == nil {
			err = os.WriteFile(os.Args[2], out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genhooks:", err)
		os.Exit(1)
	}
}
