package checkpoint

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

// failingWriter fails once more than limit bytes are written, like a full
// disk or a process killed mid-write.
type failingWriter struct {
	w     io.Writer
	limit int
}

// Write implements io.Writer.
func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n, _ := f.w.Write(p[:f.limit])
		f.limit = 0
		return n, errors.New("injected: no space left on device")
	}
	f.limit -= len(p)
	return f.w.Write(p)
}

// tmpFiles lists the temporary files in dir.
func tmpFiles(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

func TestSaveFailureKeepsPreviousCheckpoint(t *testing.T) {
	tests := []struct {
		name    string
		install func()
		want    string
	}{
		{"fails in header", func() {
			testHooks.wrapWriter = func(w io.Writer) io.Writer { return &failingWriter{w: w, limit: 10} }
		}, "injected: no space left on device"},
		{"fails in tensor data", func() {
			testHooks.wrapWriter = func(w io.Writer) io.Writer { return &failingWriter{w: w, limit: 2000} }
		}, `writing tensor "big": injected: no space left on device`},
		{"fails before rename", func() {
			testHooks.beforeRename = func(string) error { return errors.New("injected: crash before rename") }
		}, "injected: crash before rename"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := saveSample(t)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tt.install()
			t.Cleanup(func() { testHooks.wrapWriter, testHooks.beforeRename = nil, nil })

			next := sampleFile()
			next.VoltVersion = "next"
			next.Tensors = append(next.Tensors, Tensor{Name: "big", DType: dtypes.Uint32, Shape: []int{1000}, Data: make([]byte, 4000)})
			err = Save(path, next)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Save error %v, want one naming %s and containing %q", err, path, tt.want)
			}
			if left := tmpFiles(t, filepath.Dir(path)); len(left) != 0 {
				t.Errorf("temporary files left after a failed Save: %v", left)
			}
			after, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(before, after) {
				t.Fatalf("the previous checkpoint changed (err %v)", err)
			}
			if f, err := Load(path); err != nil || f.VoltVersion != "0.1.0-test" {
				t.Errorf("Load of the previous checkpoint: %v", err)
			}
		})
	}
}

func TestSaveIntoReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	path := saveSample(t)
	dir := filepath.Dir(path)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	err := Save(path, &File{VoltVersion: "next"})
	if err == nil || !strings.Contains(err.Error(), "creating temporary file") {
		t.Fatalf("Save into a read-only directory: %v, want a temporary file error", err)
	}
	if f, err := Load(path); err != nil || f.VoltVersion != "0.1.0-test" {
		t.Errorf("Load of the previous checkpoint: %v", err)
	}
}

func TestLoadIgnoresLeftoverTempFile(t *testing.T) {
	path := saveSample(t)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A process killed mid-Save leaves a partial temporary file behind.
	leftover := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".12345.tmp")
	if err := os.WriteFile(leftover, full[:len(full)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatalf("Load with a leftover temporary file: %v", err)
	}
	if f.VoltVersion != "0.1.0-test" || len(f.Tensors) != 4 {
		t.Errorf("loaded %+v", f)
	}
	// A later Save still works and does not touch the leftover.
	if err := Save(path, &File{VoltVersion: "next"}); err != nil {
		t.Fatal(err)
	}
	if left := tmpFiles(t, filepath.Dir(path)); len(left) != 1 || left[0] != leftover {
		t.Errorf("temporary files %v, want only the leftover %s", left, leftover)
	}
}
