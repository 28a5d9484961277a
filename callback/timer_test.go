package callback_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

func TestTimerStopsAtMaxTime(t *testing.T) {
	tests := []struct {
		name       string
		maxTime    time.Duration
		interval   string
		minEpochs  int
		wantSteps  int64
		wantEpochs int
	}{
		// One second per batch, four batches per epoch.
		{"step", 5 * time.Second, "", 0, 5, 2},
		{"step, exact epoch boundary", 4 * time.Second, "step", 0, 4, 1},
		{"epoch", 6 * time.Second, "epoch", 0, 8, 2},
		{"no limit", 0, "", 0, 12, 3},
		{"MinEpochs wins", 2 * time.Second, "step", 2, 8, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			tm := callback.NewTimer(callback.TimerConfig{MaxTime: tc.maxTime, Interval: tc.interval, Now: clock.Now})
			var logs bytes.Buffer
			tr, err := fit(t, capture(volt.Config{MaxEpochs: 3, MinEpochs: tc.minEpochs}, &logs), &boring{}, boringData(), ticker{clock, time.Second}, tm)
			if err != nil {
				t.Fatal(err)
			}
			if tr.GlobalStep() != tc.wantSteps || tr.CurrentEpoch() != tc.wantEpochs {
				t.Errorf("stopped at step %d, epoch %d; want %d and %d", tr.GlobalStep(), tr.CurrentEpoch(), tc.wantSteps, tc.wantEpochs)
			}
			if got := tm.Elapsed(volt.RunningTrain); got != time.Duration(tc.wantSteps)*time.Second {
				t.Errorf("Elapsed(train) = %s, want %ds", got, tc.wantSteps)
			}
			if tc.maxTime > 0 && tc.minEpochs == 0 && !strings.Contains(logs.String(), "max_time=00:00:00:0") {
				t.Errorf("stop reason not reported:\n%s", logs.String())
			}
		})
	}
}

func TestTimerStages(t *testing.T) {
	clock := newFakeClock()
	tm := callback.NewTimer(callback.TimerConfig{Now: clock.Now})
	tr, err := fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), ticker{clock, time.Second}, tm)
	if err != nil {
		t.Fatal(err)
	}
	if !tm.Start(volt.RunningTrain).Equal(newFakeClock().now) || tm.End(volt.RunningTrain).Sub(tm.Start(volt.RunningTrain)) != 8*time.Second {
		t.Errorf("train from %v to %v, want 8s from the clock's start", tm.Start(volt.RunningTrain), tm.End(volt.RunningTrain))
	}
	// The last validation ran after the 8th batch; no clock moves inside it.
	if got := tm.Start(volt.RunningValidate).Sub(tm.Start(volt.RunningTrain)); got != 8*time.Second || tm.Elapsed(volt.RunningValidate) != 0 {
		t.Errorf("validation started %s into training, lasted %s", got, tm.Elapsed(volt.RunningValidate))
	}
	if _, err := tr.Test(t.Context(), &boring{}, boringData()); err != nil {
		t.Fatal(err)
	}
	if tm.Start(volt.RunningTest).IsZero() || tm.End(volt.RunningTest).IsZero() {
		t.Error("test stage not timed")
	}

	// State carries the training time into a new timer.
	b, err := tm.State()
	if err != nil {
		t.Fatal(err)
	}
	other := callback.NewTimer(callback.TimerConfig{Now: clock.Now})
	if err := other.LoadState(b); err != nil {
		t.Fatal(err)
	}
	if other.Elapsed(volt.RunningTrain) != 8*time.Second {
		t.Errorf("loaded Elapsed(train) = %s, want 8s", other.Elapsed(volt.RunningTrain))
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"00:12:00:00", 12 * time.Hour, ""},
		{"01:02:03:04", 24*time.Hour + 2*time.Hour + 3*time.Minute + 4*time.Second, ""},
		{"00:00:00:00", 0, ""},
		{"12:00:00", 0, "want DD:HH:MM:SS"},
		{"00:xx:00:00", 0, `field 2 ("xx") is not a non-negative integer`},
		{"00:-1:00:00", 0, `field 2 ("-1")`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := callback.ParseDuration(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("= %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestTimerConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  callback.TimerConfig
		want string
	}{
		{callback.TimerConfig{Interval: "batch"}, `TimerConfig.Interval: unknown "batch"; valid: "step", "epoch"`},
		{callback.TimerConfig{MaxTime: -time.Second}, "TimerConfig.MaxTime: must be >= 0"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if err := callback.NewTimer(tc.cfg).Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
