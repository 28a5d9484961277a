package epochflag

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlag: -epochs takes positive numbers and -1, refuses 0 with the
// reason and other values with what is valid, and shows its default.
func TestFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
		says string // "" for a good value
	}{
		{nil, 3, ""},
		{[]string{"-epochs", "5"}, 5, ""},
		{[]string{"-epochs=-1"}, -1, ""},
		{[]string{"-epochs", "0"}, 0, "0 trains no epoch in Lightning (max_epochs=0), but volt reads 0 as its default (1000 epochs)"},
		{[]string{"-epochs=-2"}, 0, "want a positive number of epochs, or -1 for no limit"},
		{[]string{"-epochs", "two"}, 0, "want a whole number of epochs"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			var usage bytes.Buffer
			fs.SetOutput(&usage)
			n := Int(fs, 3, "training epochs")
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
			if tc.args[len(tc.args)-1] == "0" && !errors.Is(err, ErrZero) && !strings.Contains(err.Error(), ErrZero.Error()) {
				t.Errorf("-epochs 0: error %v is not ErrZero", err)
			}
			if !strings.Contains(usage.String(), "training epochs (default 3)") {
				t.Errorf("usage does not show the default:\n%s", usage.String())
			}
		})
	}
}

// TestEveryExampleUsesFlag: every example with an -epochs flag defines it
// through Int, so that -epochs 0 is refused alike in each. examples/firsthour
// is the exception: it is the program a user writes from the README, which
// cannot import this internal package (its -epochs help says what 0 means).
func TestEveryExampleUsesFlag(t *testing.T) {
	mains, err := filepath.Glob("../../*/main.go")
	if err != nil || len(mains) == 0 {
		t.Fatalf("no examples found (%v)", err)
	}
	using := 0
	for _, path := range mains {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if filepath.Base(filepath.Dir(path)) == "firsthour" {
			continue
		}
		if strings.Contains(src, `Int("epochs"`) {
			t.Errorf(`%s defines -epochs with Int("epochs", …); use epochflag.Int, which refuses 0 as package cli does`, path)
		}
		if strings.Contains(src, "epochflag.Int(") {
			using++
		}
	}
	if using < 9 {
		t.Errorf("%d examples use epochflag.Int; want the 9 with an -epochs flag at least", using)
	}
}
