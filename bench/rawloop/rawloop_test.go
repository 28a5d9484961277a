package rawloop

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestRunTrainsAndTimes: a short run learns (accuracy past chance) and
// prints the results and the timing line the e2e script reads.
func TestRunTrainsAndTimes(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := Run([]string{"-epochs", "1", "-max-steps", "60"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var acc float64
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "test_acc="); ok {
			if _, err := fmt.Sscan(v, &acc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if acc < 0.7 {
		t.Errorf("test_acc %v after 60 steps, want >= 0.7; stdout:\n%s", acc, out.String())
	}
	if !strings.Contains(errOut.String(), "timing: first_step_s=") || !strings.Contains(errOut.String(), " steps=59 ") {
		t.Errorf("no timing line with 59 step intervals on stderr:\n%s", errOut.String())
	}
}
