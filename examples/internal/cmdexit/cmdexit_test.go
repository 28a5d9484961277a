package cmdexit

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"
)

// TestCode: -h (flag.ErrHelp, also wrapped) exits 0, other errors 1.
func TestCode(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	help := fs.Parse([]string{"-h"})
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"-h", help, 0},
		{"wrapped -h", fmt.Errorf("parsing: %w", help), 0},
		{"bad flag", fs.Parse([]string{"-nosuch"}), 1},
		{"other", errors.New("boom"), 1},
	}
	for _, tc := range tests {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%s: Code(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}
