package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EBinaryRunsBothLoops builds the example as bench/mnist_e2e.sh does
// (-tags e2ebench) and runs it both ways: with VOLT_E2E_RAW=1 it is
// bench/rawloop (no volt loop: no confusion matrix, no test_f1), without
// it the example itself.
func TestE2EBinaryRunsBothLoops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example")
	}
	bin := filepath.Join(t.TempDir(), "mnist")
	build := exec.Command("go", "build", "-tags", "e2ebench", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags e2ebench: %v\n%s", err, out)
	}
	t.Run("-h exits 0", func(t *testing.T) {
		out, err := exec.Command(bin, "-h").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Usage of mnist") || strings.Contains(string(out), "help requested") {
			t.Errorf("mnist -h: %v\n%s", err, out)
		}
	})
	for _, tc := range []struct {
		name       string
		raw        bool
		want       []string
		wantNoneOf string
	}{
		{"raw", true, []string{"test_acc=", "timing: first_step_s="}, "test_f1="},
		{"volt", false, []string{"test_acc=", "test_f1=", "timing: first_step_s="}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "-epochs", "1", "-max-steps", "30")
			if !tc.raw {
				cmd.Args = append(cmd.Args, "-timing", "-progress=false", "-root", t.TempDir())
			}
			cmd.Env = append(os.Environ(), "VOLT_E2E_RAW=0")
			if tc.raw {
				cmd.Env = append(cmd.Env, "VOLT_E2E_RAW=1")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("no %q in\n%s", w, out)
				}
			}
			if tc.wantNoneOf != "" && strings.Contains(string(out), tc.wantNoneOf) {
				t.Errorf("%q in the %s run:\n%s", tc.wantNoneOf, tc.name, out)
			}
		})
	}
}
