package tuner

import (
	"errors"
	"fmt"
	"math"
)

// LRFindOptions configures LRFind. The zero value of each field takes
// Lightning's default.
type LRFindOptions struct {
	// MinLR and MaxLR bound the sweep (defaults 1e-8 and 1).
	MinLR, MaxLR float64
	// NumTraining is the number of optimization steps of the sweep (default 100).
	NumTraining int
	// Mode is Exponential (default) or Linear.
	Mode string
	// EarlyStopThreshold stops the sweep when the smoothed loss exceeds this
	// multiple of the best one (default 4); NoEarlyStop turns it off.
	EarlyStopThreshold float64
	// NoEarlyStop runs all NumTraining steps.
	NoEarlyStop bool
	// SkipBegin and SkipEnd are the points the suggestion ignores at each end
	// of the curve; 0 takes Lightning's defaults, 10 and 1 (Lightning's
	// skip_end=0 would leave no point at all).
	SkipBegin, SkipEnd int
	// Apply, when set, receives the suggested rate (the module's learning-rate
	// field, typically: func(lr float64) { m.LR = lr }); it is not called when
	// there is no suggestion.
	Apply func(lr float64)
	// CSVPath, when set, receives the curve as CSV (step,lr,loss) and a
	// suggestion line.
	CSVPath string
	// HTMLPath, when set, receives a self-contained page with the curve and
	// the suggestion (report.WriteLRCurveHTML).
	HTMLPath string
}

// beta is the smoothing factor of the loss (Lightning's _LRCallback default).
const beta = 0.98

// withDefaults fills Lightning's defaults and checks every field, naming the
// bad ones.
func (o LRFindOptions) withDefaults() (LRFindOptions, error) {
	if o.MinLR == 0 {
		o.MinLR = 1e-8
	}
	if o.MaxLR == 0 {
		o.MaxLR = 1
	}
	if o.NumTraining == 0 {
		o.NumTraining = 100
	}
	if o.Mode == "" {
		o.Mode = Exponential
	}
	if o.EarlyStopThreshold == 0 {
		o.EarlyStopThreshold = 4
	}
	if o.SkipBegin == 0 {
		o.SkipBegin = 10
	}
	if o.SkipEnd == 0 {
		o.SkipEnd = 1
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	if !finitePos(o.MinLR) {
		bad("LRFindOptions.MinLR: must be a positive finite number, got %v", o.MinLR)
	}
	if !finitePos(o.MaxLR) {
		bad("LRFindOptions.MaxLR: must be a positive finite number, got %v", o.MaxLR)
	} else if finitePos(o.MinLR) && o.MaxLR <= o.MinLR {
		bad("LRFindOptions.MaxLR: must be larger than MinLR (%v), got %v", o.MinLR, o.MaxLR)
	}
	if o.NumTraining < 2 {
		bad("LRFindOptions.NumTraining: must be at least 2 steps, got %d", o.NumTraining)
	}
	if o.Mode != Exponential && o.Mode != Linear {
		bad("LRFindOptions.Mode: must be %q or %q, got %q", Exponential, Linear, o.Mode)
	}
	if !finitePos(o.EarlyStopThreshold) {
		bad("LRFindOptions.EarlyStopThreshold: must be a positive finite number, got %v", o.EarlyStopThreshold)
	}
	if o.SkipBegin < 0 {
		bad("LRFindOptions.SkipBegin: must be 0 (default 10) or positive, got %d", o.SkipBegin)
	}
	if o.SkipEnd < 0 {
		bad("LRFindOptions.SkipEnd: must be 0 (default 1) or positive, got %d", o.SkipEnd)
	}
	return o, errors.Join(errs...)
}
