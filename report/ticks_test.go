package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		n      int
		want   string
	}{
		{0, 1719, 7, "[0 250 500 750 1000 1250 1500 1750]"},
		{49, 1719, 5, "[0 500 1000 1500 2000]"},
		{0.891, 0.98, 6, "[0.88 0.9 0.92 0.94 0.96 0.98]"},
		{0.0078, 0.42, 6, "[0 0.1 0.2 0.3 0.4 0.5]"},
		{-1.3, 2.2, 6, "[-2 -1 0 1 2 3]"},
		{5, 5, 3, "[4.5 5 5.5]"},
		{0, 0, 5, "[-1 -0.5 0 0.5 1]"},
		{0, 10, 5, "[0 2.5 5 7.5 10]"},
		{1e-7, 3e-7, 5, "[1e-07 1.5e-07 2e-07 2.5e-07 3e-07]"},
		{0, 125000, 6, "[0 50000 100000 150000]"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.lo, "..", tt.hi), func(t *testing.T) {
			ticks, _ := NiceTicks(tt.lo, tt.hi, tt.n)
			if got := fmt.Sprint(ticks); got != tt.want {
				t.Errorf("NiceTicks(%v, %v, %d) = %s, want %s", tt.lo, tt.hi, tt.n, got, tt.want)
			}
			if ticks[0] > tt.lo || ticks[len(ticks)-1] < tt.hi {
				t.Errorf("ticks %v do not cover [%v, %v]", ticks, tt.lo, tt.hi)
			}
		})
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		major  string
	}{
		{0.0012, 2.3, "[0.001 0.01 0.1 1 10]"},
		{0.05, 2.3, "[0.05 0.1 0.2 0.5 1 2 5]"},
		{3, 7, "[2 5 10]"},
		{1e-6, 1e-3, "[1e-06 1e-05 0.0001 0.001]"},
	}
	for _, tt := range tests {
		major, minor := LogTicks(tt.lo, tt.hi)
		if got := fmt.Sprint(major); got != tt.major {
			t.Errorf("LogTicks(%v, %v) major = %s, want %s", tt.lo, tt.hi, got, tt.major)
		}
		if len(minor) == 0 {
			t.Errorf("LogTicks(%v, %v) has no minor ticks", tt.lo, tt.hi)
		}
	}
}

func TestFormatTick(t *testing.T) {
	tests := []struct {
		v, step float64
		want    string
	}{
		{0, 0.1, "0"},
		{0.3, 0.1, "0.3"},
		{0.25, 0.25, "0.25"},
		{7.5, 2.5, "7.5"},
		{1500, 500, "1500"},
		{150000, 50000, "150k"},
		{2500000, 500000, "2.5M"},
		{0.94, 0.02, "0.94"},
		{2e-5, 1e-5, "2e-5"},
		{-1, 1, "-1"},
	}
	for _, tt := range tests {
		if got := formatTick(tt.v, tt.step); got != tt.want {
			t.Errorf("formatTick(%v, %v) = %q, want %q", tt.v, tt.step, got, tt.want)
		}
	}
	for v, want := range map[float64]string{0.001: "0.001", 1e-5: "1e-5", 100: "100", 1e6: "1e6"} {
		if got := formatLogTick(v); got != want {
			t.Errorf("formatLogTick(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestStepTicks: a step axis ticks whole numbers, labelled without
// decimals, covering the range, however short the run.
func TestStepTicks(t *testing.T) {
	for _, r := range [][2]float64{{199, 200}, {199, 199}, {0, 3}, {0, 1}, {10, 17}, {0, 1199}, {5, 5000}} {
		ticks, step := StepTicks(r[0], r[1], 7)
		if step < 1 || len(ticks) < 2 || ticks[0] > r[0] || ticks[len(ticks)-1] < r[1] {
			t.Errorf("StepTicks(%v, %v) = %v step %v: want whole steps covering the range", r[0], r[1], ticks, step)
		}
		for _, v := range ticks {
			if v != math.Trunc(v) || strings.Contains(formatTick(v, step), ".") {
				t.Errorf("StepTicks(%v, %v): tick %v labelled %q", r[0], r[1], v, formatTick(v, step))
			}
		}
	}
}
