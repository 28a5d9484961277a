package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMain runs main itself when the test starts this binary as the
// program (asMain), so that the process tests see its exit status.
func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// bestLine is the line that names the best checkpoint.
var bestLine = regexp.MustCompile(`(?m)^best: (.*epoch=\d+-val_loss=[0-9.]+\.ckpt)$`)

// TestFirstHourRuns: the program trains, keeps the best checkpoint by
// val_loss, writes TensorBoard events, reloads the best checkpoint and
// predicts every validation example.
func TestFirstHourRuns(t *testing.T) {
	dir := t.TempDir()
	var out, stderr bytes.Buffer
	cmd := program(dir, "-epochs", "3", "-n", "200", "-dir", dir)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	best := bestLine.FindStringSubmatch(out.String())
	if best == nil {
		t.Fatalf("no best checkpoint line in\n%s", out.String())
	}
	if _, err := os.Stat(best[1]); err != nil {
		t.Errorf("best checkpoint: %v", err)
	}
	if !strings.Contains(out.String(), "predictions: 40 first: [") {
		t.Errorf("want 40 predictions (the 20%% validation split of 200) in\n%s", out.String())
	}
	if events, _ := filepath.Glob(filepath.Join(dir, "volt_logs", "version_0", "events.out.tfevents.*")); len(events) != 1 {
		t.Errorf("TensorBoard event files under %s/volt_logs/version_0: %q, want one", dir, events)
	}
}
