package volt

import (
	"log/slog"
	"slices"
	"testing"
)

// TestDefaultProgressBarInHooks checks that the default bar is among the
// run's callbacks exactly when Config.EnableProgressBar is nil or true and
// no ProgressReporter is configured, without changing Config.Callbacks.
func TestDefaultProgressBarInHooks(t *testing.T) {
	own := NewProgressBar(ProgressBarConfig{})
	cases := []struct {
		name      string
		enabled   *bool
		callbacks []Callback
		want      bool
	}{
		{"nil", nil, nil, true},
		{"true", Ptr(true), nil, true},
		{"false", Ptr(false), nil, false},
		{"a bar of one's own", nil, []Callback{own}, false},
	}
	for _, c := range cases {
		tr, err := NewTrainer(Config{DisableLoggers: true, Log: slog.New(slog.DiscardHandler), EnableProgressBar: c.enabled, Callbacks: c.callbacks})
		if err != nil {
			t.Fatal(err)
		}
		got := tr.defaultBar != nil && slices.Contains(tr.callbacks(), Callback(tr.defaultBar))
		if got != c.want || len(tr.Config().Callbacks) != len(c.callbacks) {
			t.Errorf("%s: default bar in the callbacks %v, want %v; Config().Callbacks %d, want %d",
				c.name, got, c.want, len(tr.Config().Callbacks), len(c.callbacks))
		}
	}
}
