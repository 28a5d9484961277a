package volt_test

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/voltml/volt"
)

// TestEpochsFlag: the flag takes positive numbers and -1, refuses 0 with
// ErrZeroEpochs (the reason: Lightning trains no epoch, Config would train
// 1000) and other values with what is valid, and shows its default.
func TestEpochsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
		says string // "" for a good value
	}{
		{nil, 3, ""},
		{[]string{"-epochs", "5"}, 5, ""},
		{[]string{"-epochs=-1"}, -1, ""},
		{[]string{"-epochs", "0"}, 0, volt.ErrZeroEpochs.Error()},
		{[]string{"-epochs=-2"}, 0, "want a positive number of epochs, or -1 for no limit"},
		{[]string{"-epochs", "two"}, 0, "want a whole number of epochs"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			var usage bytes.Buffer
			fs.SetOutput(&usage)
			n := volt.EpochsFlag(fs, "epochs", 3, "training epochs")
			err := fs.Parse(tc.args)
			if tc.says == "" {
				if err != nil || *n != tc.want {
					t.Errorf("-epochs %d, error %v; want %d", *n, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v; want one saying %q", err, tc.says)
			}
			if !strings.Contains(usage.String(), "training epochs (default 3)") {
				t.Errorf("usage does not show the default:\n%s", usage.String())
			}
		})
	}
}
