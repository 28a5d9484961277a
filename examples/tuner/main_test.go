package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt/report"
)

// TestTunerFindsAndTrains runs a short sweep and 30 training batches: the
// suggestion lies inside the sweep, the curve is saved where volt report
// finds it (with the suggestion), and training at the suggested rate learns.
func TestTunerFindsAndTrains(t *testing.T) {
	root := t.TempDir()
	var out bytes.Buffer
	args := []string{"-lr-steps", "40", "-min-lr", "1e-5", "-max-lr", "1", "-train-batches", "30", "-eval-batches", "10", "-root", root}
	if err := run(args, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, line := range strings.Split(out.String(), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.Fields(v)[0], 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		values[k] = f
	}
	if lr := values["suggested_lr"]; !(lr > 1e-5 && lr < 1) {
		t.Errorf("suggested_lr %v, want one inside the sweep (1e-5, 1)\n%s", lr, out.String())
	}
	if acc := values["test_acc"]; acc < 0.5 {
		t.Errorf("test accuracy %v after 30 batches at the suggested rate, want >= 0.5 (chance is 0.1)\n%s", acc, out.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "volt_logs", "version_*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v, want one", dirs)
	}
	runs, _, err := report.Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	c := runs[0].LRFind
	if c == nil || c.Suggested < 0 || strconv.FormatFloat(c.LRs[c.Suggested], 'g', 3, 64) != strconv.FormatFloat(values["suggested_lr"], 'g', 3, 64) {
		t.Errorf("the report's curve %+v does not mark the printed suggestion %v", c, values["suggested_lr"])
	}
	if _, err := os.Stat(filepath.Join(dirs[0], report.MetricsFileName)); err != nil {
		t.Errorf("the training run's metrics are not beside the curve: %v", err)
	}
}
