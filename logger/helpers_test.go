package logger

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// readCSV returns the records of a CSV file, failing the test on error.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return recs
}

// equalRecords reports whether two record lists are identical.
func equalRecords(a, b [][]string) bool {
	return slices.EqualFunc(a, b, slices.Equal)
}

// mkdirs creates the given directories (relative to root).
func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// intPtr returns a pointer to v.
func intPtr(v int) *int { return &v }

// newTestCSV constructs a CSVLogger, failing the test on error.
func newTestCSV(t *testing.T, cfg CSVConfig) *CSVLogger {
	t.Helper()
	l, err := NewCSV(cfg)
	if err != nil {
		t.Fatalf("NewCSV(%+v): %v", cfg, err)
	}
	return l
}
