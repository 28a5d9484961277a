package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/voltml/volt/examples/internal/kv"
)

// TestSeqClassLearns trains a small configuration (2 marks in 12 tokens: 4
// classes, chance 0.25) for 3 epochs of 1024 sequences (96 steps): the validation
// accuracy is far above chance, which no constant guess reaches, and the
// parameter count is PyTorch's.
func TestSeqClassLearns(t *testing.T) {
	var out bytes.Buffer
	args := []string{"-length", "12", "-marks", "2", "-hidden", "16", "-train", "1024", "-val", "256", "-epochs", "3",
		"-progress=false", "-root", t.TempDir()}
	if err := run(args, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	r := kv.Parse(t, out.String())
	if r["classes"] != 4 || r["chance"] != 0.25 {
		t.Errorf("classes=%v chance=%v, want 4 and 0.25", r["classes"], r["chance"])
	}
	if !(r["val_acc"] >= 0.75) {
		t.Errorf("val_acc=%v after 3 epochs, want >= 0.75 (chance 0.25)\n%s", r["val_acc"], out.String())
	}
	// sum(p.numel()) of tools/parity/seqclass.py's model at this size:
	// embedding 6·8, LSTM 4·16·(8+16) + 2·4·16, head 16·4 + 4.
	if want := 48.0 + 1536 + 128 + 68; r["params"] != want {
		t.Errorf("params=%v, want PyTorch's %v", r["params"], want)
	}
	t.Logf("%s", out.String())
}

// TestFlagErrors: bad sizes are refused with the flag named.
func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-epochs", "0"}, "-epochs"},
		{[]string{"-lr", "0"}, "-lr"},
		{[]string{"-marks", "4", "-length", "3"}, "-length 3, -marks 4"},
		{[]string{"-marks", "11", "-length", "40"}, "Marks must be in [1, 10]"},
		{[]string{"-hidden", "0"}, "-hidden 0"},
	} {
		err := run(append(tc.args, "-progress=false", "-root", t.TempDir()), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
