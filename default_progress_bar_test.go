package volt_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/voltml/volt"
)

// TestEnableProgressBar checks Config.EnableProgressBar with and without a
// ProgressBar in Callbacks: a ProgressBar of one's own replaces the default,
// and false with one is an error naming both fields.
func TestEnableProgressBar(t *testing.T) {
	var buf bytes.Buffer
	bar := volt.NewProgressBar(volt.ProgressBarConfig{Writer: &buf})
	cases := []struct {
		name    string
		enabled *bool
		mine    bool
		lines   int // the user's bar's lines after a 2-epoch Fit
		wantErr string
	}{
		{name: "default, with a bar of one's own", mine: true, lines: 2},
		{name: "true, with a bar of one's own", enabled: volt.Ptr(true), mine: true, lines: 2},
		{name: "false, with a bar of one's own", enabled: volt.Ptr(false), mine: true,
			wantErr: "Config.EnableProgressBar is false but Config.Callbacks[0] (*volt.ProgressBar) shows progress"},
		{name: "false", enabled: volt.Ptr(false)},
		{name: "default", enabled: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf.Reset()
			cfg := quiet(volt.Config{MaxEpochs: 2})
			cfg.EnableProgressBar = c.enabled
			if c.mine {
				cfg.Callbacks = []volt.Callback{bar}
			}
			tr, err := volt.NewTrainer(cfg)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(buf.String(), "\n"); n != c.lines {
				t.Errorf("the user's bar wrote %d lines, want %d:\n%s", n, c.lines, buf.String())
			}
		})
	}
}
