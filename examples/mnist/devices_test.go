package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/dist/mpitest"
)

// TestDevices2 builds the example with -tags mpi and runs it as one plain
// process with -devices 2: it runs itself again as 2 MPI ranks, and rank 0
// alone prints the test results, reduced over the whole test set.
func TestDevices2(t *testing.T) {
	bin := mpitest.Build(t, ".")
	cmd := exec.Command(bin, "-devices", "2", "-epochs", "1", "-max-steps", "120", "-progress=false", "-root", t.TempDir())
	cmd.Env = append(os.Environ(), dist.LaunchEnv()...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr.String())
	}
	if n := strings.Count(string(out), "test_acc="); n != 1 {
		t.Fatalf("%d test_acc lines, want rank 0's alone:\n%s", n, out)
	}
	if n := strings.Count(string(out), "epoch 0: step 120"); n != 1 {
		t.Errorf("%d epoch lines, want rank 0's alone:\n%s", n, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var acc, f1 float64
	if _, err := fmt.Sscanf(lines[len(lines)-1], "test_acc=%g test_f1=%g", &acc, &f1); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	// 120 steps of 2 ranks × 64 images: past chance, as one process's 120
	// steps of 64 (TestExampleTrainsAFewSteps).
	if acc < 0.8 {
		t.Errorf("test_acc=%v after 120 steps on 2 ranks, want >= 0.8", acc)
	}
	if !strings.Contains(stderr.String(), "rank 0 of 2") {
		t.Errorf("stderr does not say the job runs 2 ranks:\n%s", stderr.String())
	}
}
