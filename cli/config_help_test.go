package cli

import (
	"os"
	"testing"

	"github.com/voltml/volt/cli/internal/confighelp"
)

// TestConfigHelpIsCurrent checks config_help.go matches the doc comments
// of volt.Config; run "go generate ./cli" after changing them.
func TestConfigHelpIsCurrent(t *testing.T) {
	help, err := confighelp.Extract("../config.go")
	if err != nil {
		t.Fatal(err)
	}
	want, err := confighelp.Render(help)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("config_help.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error(`config_help.go is stale: run "go generate ./cli"`)
	}
	if help["MaxEpochs"] != "MaxEpochs stops training after this many epochs." {
		t.Errorf("MaxEpochs help %q", help["MaxEpochs"])
	}
}
