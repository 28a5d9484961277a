package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLog writes a small version directory under root and returns it.
func writeLog(t *testing.T, root, name string) string {
	t.Helper()
	d := filepath.Join(root, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	csv := "step,epoch,train_loss,val_acc,val_loss\n9,0,2.1,,\n19,0,1.5,,\n19,0,,0.6,1.7\n29,1,1.1,,\n39,1,0.8,,\n39,1,,0.7,1.2\n"
	if err := os.WriteFile(filepath.Join(d, "metrics.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "hparams.yaml"), []byte("lr: 0.01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestReportCommand(t *testing.T) {
	root := t.TempDir()
	logs := filepath.Join(root, "volt_logs")
	v0 := writeLog(t, logs, "version_0")
	writeLog(t, logs, "version_1")
	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out.html")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
		file   string // the page that must exist afterwards
		plots  int
	}{
		{name: "one version dir", args: []string{v0}, stdout: "wrote " + v0 + "/report.html: 1 run, 2 plots", file: v0 + "/report.html", plots: 2},
		{name: "parent compares versions", args: []string{logs, "-o", out}, stdout: "wrote " + out + ": 2 runs, 2 plots", file: out, plots: 2},
		{name: "flags first", args: []string{"-o", out, "-title", "My runs", "-log", "off", "-smooth", "off", v0}, stdout: "1 run, 2 plots", file: out, plots: 2},
		{name: "help", args: []string{"-h"}, stdout: "Usage: volt report"},
		{name: "no dir", args: nil, code: 2, stderr: "report needs at least one log directory"},
		{name: "bad -log", args: []string{"-log", "maybe", v0}, code: 2, stderr: `-log must be auto, on or off, got "maybe"`},
		{name: "bad -smooth", args: []string{"-smooth", "0.5", v0}, code: 2, stderr: `-smooth must be auto, off or a window`},
		{name: "unknown flag", args: []string{"-x", v0}, code: 2, stderr: "flag provided but not defined: -x"},
		{name: "dir without metrics.csv", args: []string{empty}, code: 1, stderr: "volt: report: no metrics.csv or TensorBoard event file in " + empty},
		{name: "missing dir", args: []string{filepath.Join(root, "nope")}, code: 1, stderr: filepath.Join(root, "nope") + " does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.file != "" {
				os.Remove(tt.file)
			}
			code, stdout, stderr := runVolt(append([]string{"report"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q, want it to contain %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
			if tt.code == 2 && !strings.Contains(stderr, "Usage: volt report") {
				t.Errorf("usage error without the usage: %q", stderr)
			}
			if tt.file != "" {
				page, err := os.ReadFile(tt.file)
				if err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(string(page), `<svg class="plot"`); n != tt.plots {
					t.Errorf("%s has %d plots, want %d", tt.file, n, tt.plots)
				}
			}
		})
	}
}

func TestReportDefaultOutputForSeveralRuns(t *testing.T) {
	root := t.TempDir()
	a := writeLog(t, filepath.Join(root, "a"), "version_0")
	b := writeLog(t, filepath.Join(root, "b"), "version_0")
	t.Chdir(t.TempDir())
	code, stdout, stderr := runVolt("report", a, b)
	if code != 0 || !strings.Contains(stdout, "wrote volt_report.html: 2 runs") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	page, err := os.ReadFile("volt_report.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"volt report: a, b", "2 runs compared"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
