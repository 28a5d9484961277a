package epochs

import (
	"strings"
	"testing"
)

// TestCheck: 0 and negative epochs are refused with the flag's name and
// what is valid; -1 only where the example allows no limit.
func TestCheck(t *testing.T) {
	tests := []struct {
		n       int
		noLimit bool
		want    string // "" for no error
	}{
		{1, false, ""},
		{30, true, ""},
		{-1, true, ""},
		{0, false, "-epochs=0: 0 trains no epoch in Lightning, but volt reads 0 as its default (1000 epochs); give a positive number of epochs"},
		{0, true, "give a positive number of epochs, or -1 for no limit"},
		{-1, false, "-epochs=-1: want a positive number of epochs"},
		{-2, true, "-epochs=-2: want a positive number of epochs, or -1 for no limit"},
	}
	for _, tc := range tests {
		err := Check(tc.n, tc.noLimit)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Check(%d, %v) = %v, want nil", tc.n, tc.noLimit, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Check(%d, %v) = %v, want an error containing %q", tc.n, tc.noLimit, err, tc.want)
		}
	}
}
