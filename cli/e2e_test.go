package cli

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/testutil"
	"gopkg.in/yaml.v3"
)

// programEnv makes the test binary act as a user's program built on
// cli.Main (see TestMain): the end-to-end tests run it in new processes.
const programEnv = "VOLT_CLI_TEST_PROGRAM"

// TestMain runs the program instead of the tests when programEnv is set:
// "1" for the program of testutil.Boring, "sort" for sortBoring's.
func TestMain(m *testing.M) {
	switch os.Getenv(programEnv) {
	case "1":
		Main(func() *testutil.Boring { return &testutil.Boring{LR: 0.05} }, testutil.NewBoringDataModule)
		os.Exit(0)
	case "sort":
		Main(func() *sortBoring { return &sortBoring{} }, testutil.NewBoringDataModule)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runProgram runs the program in dir with args, returning its stdout,
// stderr and exit status.
func runProgram(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	return runProgramAs(t, "1", dir, args...)
}

// runProgramAs runs the program that programEnv=program selects.
func runProgramAs(t *testing.T, program, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), programEnv+"="+program)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// mustRun runs the program and fails the test unless it exits with 0.
func mustRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	stdout, stderr, code := runProgram(t, dir, args...)
	if code != 0 {
		t.Fatalf("%s: exit status %d\nstderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// TestEndToEnd uses the program as a user would: fit from a file and a
// flag, then, each in a new process, validate and test from the saved
// config.yaml and the checkpoint, re-run config.yaml as is, and resume.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five training processes")
	}
	dir := t.TempDir()
	x := "trainer:\n  max_epochs: 5\n  disable_model_summary: true\n  callbacks: [timer]\nmodel:\n  lr: 0.1\ndata:\n  batch_size: 8\n"
	if err := os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(x), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runProgram(t, dir, "fit", "--trainer.max_epochs=2", "--config", "x.yaml")
	if code != 0 {
		t.Fatalf("fit: exit status %d\nstderr:\n%s", code, stderr)
	}

	// The saved config has the flag's max_epochs and the file's values.
	run0 := filepath.Join(dir, "volt_logs", "version_0")
	saved := readYAML(t, filepath.Join(run0, ConfigFileName))
	for key, want := range map[string]string{"trainer.max_epochs": "2", "model.lr": "0.1", "data.batch_size": "8", "data.examples": "64"} {
		if got := lookupKey(saved, key); got != want {
			t.Errorf("config.yaml: %s = %q, want %q", key, got, want)
		}
	}
	// 64 examples in batches of 8: 8 steps per epoch, two epochs.
	ckpt := filepath.Join("volt_logs", "version_0", "checkpoints", "epoch=1-step=16.ckpt")
	if _, err := os.Stat(filepath.Join(dir, ckpt)); err != nil {
		t.Fatalf("no checkpoint after fit: %v", err)
	}
	config := filepath.Join("volt_logs", "version_0", ConfigFileName)
	for _, path := range []string{ckpt, config} {
		if !strings.Contains(stderr, " "+path+" (") {
			t.Errorf("fit did not say where %s is:\n%s", path, stderr)
		}
	}

	// Validating the checkpoint gives the last val_loss that fit logged.
	out := mustRun(t, dir, "validate", "--config", config, "--ckpt-path", ckpt, "--trainer.disable_loggers")
	lastVal := lastColumn(t, filepath.Join(run0, "metrics.csv"), "val_loss")
	if want := "val_loss=" + lastVal + "\n"; out != want {
		t.Errorf("validate --ckpt-path printed %q, want %q (the last val_loss of metrics.csv)", out, want)
	}
	// Testing with and without the checkpoint: the trained weights are used.
	trained := mustRun(t, dir, "test", "--config", config, "--ckpt-path", ckpt, "--trainer.disable_loggers")
	untrained := mustRun(t, dir, "test", "--config", config, "--trainer.disable_loggers")
	if !strings.HasPrefix(trained, "test_loss=") || trained == untrained {
		t.Errorf("test with the checkpoint printed %q, without %q; want a test_loss that differs", trained, untrained)
	}

	// predict writes the predictions through a callback named on the command line.
	_, stderr, code = runProgram(t, dir, "predict", "--config", config, "--ckpt-path", ckpt, "--trainer.disable_loggers",
		"--trainer.callbacks={prediction_writer: {dir: preds, write_interval: epoch}}")
	if written, _ := filepath.Glob(filepath.Join(dir, "preds", "*")); code != 0 || len(written) == 0 {
		t.Errorf("predict: exit status %d, files %v, stderr:\n%s", code, written, stderr)
	}

	// config.yaml re-run as is: the same config and the same training.
	mustRun(t, dir, "fit", "--config", config)
	run1 := filepath.Join(dir, "volt_logs", "version_1")
	if a, b := readFile(t, filepath.Join(run0, ConfigFileName)), readFile(t, filepath.Join(run1, ConfigFileName)); a != b {
		t.Errorf("re-running config.yaml saved a different config:\n%s\nfirst:\n%s", b, a)
	}
	if a, b := readFile(t, filepath.Join(run0, "metrics.csv")), readFile(t, filepath.Join(run1, "metrics.csv")); a != b {
		t.Errorf("re-running config.yaml logged different metrics:\n%s\nfirst:\n%s", b, a)
	}

	// --ckpt-path resumes fit: one more epoch continues the step count, in
	// the run directory of the checkpoint (one run, not a new version).
	mustRun(t, dir, "fit", "--config", config, "--trainer.max_epochs=3", "--ckpt-path", ckpt)
	if _, err := os.Stat(filepath.Join(run0, "checkpoints", "epoch=2-step=24.ckpt")); err != nil {
		t.Errorf("resumed fit did not continue to epoch 3, step 24 in %s: %v", run0, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "volt_logs", "version_2")); err == nil {
		t.Errorf("resumed fit made a new version directory instead of continuing %s", run0)
	}

	// A mistake: exit status 2 and the message on stderr.
	_, stderr, code = runProgram(t, dir, "fit", "--config", "x.yaml", "--trainer.max_epoch=3")
	if want := "unknown flag; did you mean --trainer.max_epochs?"; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("bad flag: exit status %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

// readFile returns a file's text.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readYAML parses a YAML file.
func readYAML(t *testing.T, path string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(readFile(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// lookupKey returns the scalar at a dotted key ("" when absent).
func lookupKey(n *yaml.Node, key string) string {
	for _, part := range strings.Split(key, ".") {
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return ""
		}
		n = next
	}
	return n.Value
}

// lastColumn returns the last non-empty value of a column of a CSV file.
func lastColumn(t *testing.T, path, column string) string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(readFile(t, path))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col, last := -1, ""
	for i, name := range rows[0] {
		if name == column {
			col = i
		}
	}
	for _, row := range rows[1:] {
		if col >= 0 && row[col] != "" {
			last = row[col]
		}
	}
	if last == "" {
		t.Fatalf("%s has no %s", path, column)
	}
	return last
}
