package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/testenv"
)

// TestMNISTVsLightningScriptRuns runs bench/mnist_vs_lightning.sh for one
// round of 40 steps: volt's example and Lightning's twin each finish with
// a test accuracy, Lightning runs on every allocator (all installed in
// CI), and the ratios line comes out with positive figures.
func TestMNISTVsLightningScriptRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example and Lightning 5 times")
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import torch").CombinedOutput(); err != nil {
		testenv.Missing(t, "/usr/bin/python3 cannot import torch: "+strings.TrimSpace(string(out)), "apt-get install python3-torch")
	}
	for _, tool := range []string{"script", "/usr/bin/time", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool+" is missing", "apt-get install util-linux time xz-utils")
		}
	}
	for _, lib := range []string{"libtcmalloc_minimal.so.4", "libjemalloc.so.2"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/x86_64-linux-gnu", lib)); err != nil {
			testenv.Missing(t, lib+" is missing", "apt-get install libtcmalloc-minimal4 libjemalloc2")
		}
	}
	cmd := exec.Command("bash", "bench/mnist_vs_lightning.sh")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "RUNS=1", "EPOCHS=1", "MAX_STEPS=40")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, name := range []string{"volt", "lightning-glibc", "lightning-glibc-fixed", "lightning-tcmalloc", "lightning-jemalloc", "lightning-best"} {
		row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0\.[0-9]+$`)
		if !row.Match(out) {
			t.Errorf("no row for %s with a test accuracy in\n%s", name, out)
		}
	}
	ratios := regexp.MustCompile(`volt/lightning-best, median of the rounds: wall ([0-9.]+)x, cpu ([0-9.]+)x, first step ([0-9.]+)x, step ([0-9.]+)x, peak RSS ([0-9.]+)x`).FindSubmatch(out)
	if ratios == nil {
		t.Fatalf("no ratios line in\n%s", out)
	}
	for _, r := range ratios[1:] {
		if strings.Trim(string(r), "0.") == "" {
			t.Errorf("a zero ratio in %q", ratios[0])
		}
	}
}
