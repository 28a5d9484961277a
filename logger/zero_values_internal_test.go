package logger

import (
	"path/filepath"
	"testing"
)

// TestZeroValuesAreTheDocumentedDefaults: a zero-valued CSVConfig or
// JSONLConfig (SaveDir aside) makes the same logger as the documented
// defaults written out: Name DefaultName, the next free version (0 here),
// FlushEvery DefaultFlushEvery.
func TestZeroValuesAreTheDocumentedDefaults(t *testing.T) {
	dir := t.TempDir()
	zero, err := NewCSV(CSVConfig{SaveDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := NewCSV(CSVConfig{SaveDir: dir, Name: DefaultName, Version: new(int), FlushEvery: DefaultFlushEvery})
	if err != nil {
		t.Fatal(err)
	}
	if zero.LogDir() != explicit.LogDir() || zero.LogDir() != filepath.Join(dir, DefaultName, "version_0") ||
		zero.flushEvery != explicit.flushEvery || zero.cadence != explicit.cadence {
		t.Errorf("CSV: zero value %s every %d, defaults %s every %d",
			zero.LogDir(), zero.flushEvery, explicit.LogDir(), explicit.flushEvery)
	}
	zj, err := NewJSONL(JSONLConfig{SaveDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ej, err := NewJSONL(JSONLConfig{SaveDir: dir, Name: DefaultName, Version: new(int)})
	if err != nil {
		t.Fatal(err)
	}
	if zj.LogDir() != ej.LogDir() || zj.LogDir() != zero.LogDir() || zj.cadence != ej.cadence {
		t.Errorf("JSONL: zero value %s, defaults %s", zj.LogDir(), ej.LogDir())
	}
}
