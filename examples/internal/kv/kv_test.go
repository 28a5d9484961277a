package kv

import (
	"fmt"
	"maps"
	"testing"
)

// TestParse: the key=value lines by key, other lines passed over.
func TestParse(t *testing.T) {
	got := Parse(t, "wrote a.png\nval_acc=0.9714\ntest_loss=1e-3\npredicted: 1 2\nparams=811776\n")
	want := map[string]float64{"val_acc": 0.9714, "test_loss": 1e-3, "params": 811776}
	if !maps.Equal(got, want) {
		t.Errorf("Parse = %v, want %v", got, want)
	}
}

// fatalRecorder records Fatalf instead of stopping the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

// TestParseRejectsAWord: a value that is not a number fails the test,
// quoting its line.
func TestParseRejectsAWord(t *testing.T) {
	f := &fatalRecorder{TB: t}
	Parse(f, "val_acc=0.9\nmode=max\n")
	if want := `line "mode=max": strconv.ParseFloat: parsing "max": invalid syntax`; f.msg != want {
		t.Errorf("Fatalf got %q, want %q", f.msg, want)
	}
}
