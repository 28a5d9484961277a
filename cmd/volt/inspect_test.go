package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	path := writeCheckpoint(t)
	code, stdout, stderr := runVolt("ckpt", "inspect", path)
	if code != 0 || stderr != "" {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	t.Logf("output:\n%s", stdout)
	for _, want := range []string{
		"checkpoint:    " + path + "\n",
		"format:        volt-checkpoint, version 1\n",
		"volt version:  0.3.0-test\n",
		"checksum:      verified OK (sha256:",
		"state:\n  callbacks: {\n    \"ModelCheckpoint\": {\n      \"best_score\": 0.125\n    }\n  }\n",
		"  metrics: {\n    \"val_loss\": 0.125\n  }\n",
		"  schedulers: [\n    {\n      \"last_lr\": 0.001\n    },\n    null\n  ]\n",
		"  progress: {\n    \"epoch\": 4,\n    \"global_step\": 400\n  }\n",
		"tensors:\n  NAME           DTYPE  SHAPE   ELEMENTS  BYTES\n",
		"  dense/weights  F32    [2, 3]         6     24\n",
		"  step           I64    []             1      8\n",
		"total:         2 tensors, 7 elements, 32 bytes (32 B)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if i, j := strings.Index(stdout, "callbacks:"), strings.Index(stdout, "progress:"); i > j {
		t.Errorf("state keys are not sorted:\n%s", stdout)
	}
}

func TestInspectFailures(t *testing.T) {
	tests := []struct {
		name   string
		path   func(t *testing.T) string
		stdout string // "" means no output
		stderr string
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none.ckpt") },
			"", ": no such file"},
		{"corrupted data", func(t *testing.T) string {
			return editFile(t, writeCheckpoint(t), func(b []byte) []byte { b[len(b)-9] ^= 0x40; return b })
		}, "checksum:      MISMATCH (file corrupted?)", ": checksum mismatch (file corrupted?)"},
		{"truncated", func(t *testing.T) string {
			return editFile(t, writeCheckpoint(t), func(b []byte) []byte { return b[:len(b)-1] })
		}, "", ": truncated: "},
		{"not a checkpoint", func(t *testing.T) string {
			return editFile(t, writeCheckpoint(t), func([]byte) []byte { return []byte("name,value\nloss,0.1\n") })
		}, "", " is not a volt checkpoint: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			code, stdout, stderr := runVolt("ckpt", "inspect", path)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if (tt.stdout == "" && stdout != "") || !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q, want %q", stdout, tt.stdout)
			}
			if want := "volt: checkpoint " + path + tt.stderr; !strings.HasPrefix(stderr, want) {
				t.Errorf("stderr %q, want prefix %q", stderr, want)
			}
		})
	}
}

// editFile rewrites the file at path with edit and returns path.
func editFile(t *testing.T, path string, edit func([]byte) []byte) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
