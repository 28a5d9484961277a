package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFirstHourRuns: the program trains, keeps the best checkpoint by
// val_loss, writes TensorBoard events, reloads the best checkpoint and
// predicts every validation example; a wrong flag is an error.
func TestFirstHourRuns(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"-epochs", "3", "-n", "200", "-dir", dir}, &out); err != nil {
		t.Fatal(err)
	}
	best := regexp.MustCompile(`(?m)^best: (.*epoch=\d+-val_loss=[0-9.]+\.ckpt)$`).FindStringSubmatch(out.String())
	if best == nil {
		t.Fatalf("no best checkpoint line in\n%s", out.String())
	}
	if _, err := os.Stat(best[1]); err != nil {
		t.Errorf("best checkpoint: %v", err)
	}
	if !strings.Contains(out.String(), "predictions: 40 first: [") {
		t.Errorf("want 40 predictions (the 20%% validation split of 200) in\n%s", out.String())
	}
	events, _ := filepath.Glob(filepath.Join(dir, "*", "*", "events.out.tfevents.*"))
	if len(events) == 0 {
		events, _ = filepath.Glob(filepath.Join(dir, "*", "events.out.tfevents.*"))
	}
	if len(events) == 0 {
		t.Errorf("no TensorBoard event file under %s", dir)
	}
	if err := run([]string{"-epochs", "x"}, &out); err == nil {
		t.Error("-epochs x: no error")
	}
}
