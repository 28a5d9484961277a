package tensorboard

import (
	"testing"

	"github.com/voltml/volt/logger"
)

// TestZeroValuesAreTheDocumentedDefaults: a zero-valued Config (SaveDir
// aside) resolves like the documented defaults written out.
func TestZeroValuesAreTheDocumentedDefaults(t *testing.T) {
	dir := t.TempDir()
	zero := New(Config{SaveDir: dir})
	err := zero.Validate()
	if err != nil {
		t.Fatal(err)
	}
	explicit := New(Config{SaveDir: dir, Name: logger.DefaultName, Version: new(int),
		FlushEvery: DefaultFlushEvery, FlushInterval: DefaultFlushInterval})
	if err := explicit.Validate(); err != nil {
		t.Fatal(err)
	}
	if zero.LogDir() != explicit.LogDir() || zero.cfg.FlushEvery != explicit.cfg.FlushEvery ||
		zero.cfg.FlushInterval != explicit.cfg.FlushInterval || zero.cfg.FlushEvery != DefaultFlushEvery {
		t.Errorf("zero value %s %d %v, defaults %s %d %v", zero.LogDir(), zero.cfg.FlushEvery, zero.cfg.FlushInterval,
			explicit.LogDir(), explicit.cfg.FlushEvery, explicit.cfg.FlushInterval)
	}
}
