package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamplesRefuseZeroEpochs: every example program with an -epochs flag
// defines it with volt.EpochsFlag, so that -epochs 0 is refused alike in
// each and in package cli (Lightning's max_epochs=0 trains no epoch, while
// volt.Config reads 0 as 1000 epochs); none defines it with flag's Int.
func TestExamplesRefuseZeroEpochs(t *testing.T) {
	mains, err := filepath.Glob("../examples/*/main.go")
	if err != nil || len(mains) == 0 {
		t.Fatalf("no examples found (%v)", err)
	}
	using := 0
	for _, path := range mains {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if strings.Contains(src, `Int("epochs"`) {
			t.Errorf(`%s defines -epochs with Int("epochs", …); use volt.EpochsFlag, which refuses 0 as package cli does`, path)
		}
		if strings.Contains(src, `volt.EpochsFlag(`) {
			using++
		}
	}
	if using < 10 {
		t.Errorf("%d examples use volt.EpochsFlag; want the 10 with an -epochs flag at least", using)
	}
}
