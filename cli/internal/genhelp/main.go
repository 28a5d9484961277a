// Command genhelp writes cli/config_help.go, the --help text of the trainer
// keys, from the doc comments of volt.Config in config.go. Run it with go
// generate in cli/ after changing volt.Config; a test in cli fails while
// the file is stale.
package main

import (
	"fmt"
	"os"

	"github.com/voltml/volt/cli/internal/confighelp"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genhelp CONFIG_GO OUTPUT_GO")
		os.Exit(2)
	}
	help, err := confighelp.Extract(os.Args[1])
	if err == nil {
		var src []byte
		if src, err = confighelp.Render(help); err == nil {
			err = os.WriteFile(os.Args[2], src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genhelp:", err)
		os.Exit(1)
	}
}
