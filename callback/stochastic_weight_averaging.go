package callback

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/voltml/volt"
)

// StochasticWeightAveraging averages the weights of the last epochs of
// training while annealing the learning rate to a constant (Lightning's
// StochasticWeightAveraging, after Izmailov et al., "Averaging Weights Leads
// to Wider Optima and Better Generalization").
//
// From the start epoch on (StartEpoch, or StartFraction of MaxEpochs), at the
// end of every epoch the weights are folded into a running mean,
// avg += (w − avg)/(n+1) (torch's AveragedModel), kept in store variables
// under "/volt/swa/…" so that checkpoints save it. At the start of each of
// those epochs the learning rate of every optimizer is set as torch's SWALR
// sets it: with lr0 the rate when averaging began and k the epochs since,
// lr = (1−α)·lr0 + α·SWALR, α = a(min(k/AnnealingEpochs, 1)), a(x) = x
// ("linear") or (1−cos πx)/2 ("cos"). At OnTrainEnd the mean replaces the
// weights.
//
// Differences from Lightning: the weights are averaged at the end of each
// averaging epoch (Lightning folds them in at the start of the next one, so
// its average leaves out the last epoch); the mean is copied into the weights
// whenever at least one epoch was averaged, also after an early stop; batch
// normalization statistics are averaged with the rest instead of being
// recomputed in an extra epoch; and the module's schedulers are not
// replaced: an epoch scheduler's rate is overridden at each epoch start, a
// step scheduler's is not (a warning says so). The averaging costs one host
// pass over the weights per epoch (see averages).
type StochasticWeightAveraging struct {
	configured[StochasticWeightAveragingConfig]
	avg        averages
	t          *volt.Trainer
	start, end int // 0-based epochs averaged: start..end
	state      swaState
	loaded     bool
}

// StochasticWeightAveragingConfig configures StochasticWeightAveraging.
type StochasticWeightAveragingConfig struct {
	// SWALRs is the learning rate the annealing reaches: one value for every
	// optimizer, or one per optimizer. Required, each > 0 (Lightning's
	// swa_lrs).
	SWALRs []float64
	// StartEpoch is the epoch, counted from 1, whose end is averaged first
	// (Lightning's integer swa_epoch_start); 0 uses StartFraction.
	StartEpoch int
	// StartFraction starts averaging at epoch int(MaxEpochs·StartFraction)
	// counted from 1, with StartFraction in (0, 1] (Lightning's float
	// swa_epoch_start); 0 means 0.8 when StartEpoch is 0.
	StartFraction float64
	// AnnealingEpochs is the number of epochs over which the learning rate
	// moves from lr0 to SWALRs; 0 means 10.
	AnnealingEpochs int
	// AnnealingStrategy is "cos" (default) or "linear".
	AnnealingStrategy string
}

// swaState is what the callback keeps besides the store variables.
type swaState struct {
	// LR0 is each optimizer's learning rate when averaging began (nil before).
	LR0 []float64 `json:"lr0,omitempty"`
	// LatestEpoch is the last epoch averaged (-1: none).
	LatestEpoch int `json:"latest_update_epoch"`
	// RatesSetEpoch is the last epoch whose learning rates it set (nil:
	// none, or a checkpoint from before it was saved). A run resumed inside
	// that epoch keeps the checkpoint's rates: a step scheduler may have
	// changed them since.
	RatesSetEpoch *int `json:"rates_set_epoch,omitempty"`
}

// NewStochasticWeightAveraging returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewStochasticWeightAveraging(cfg StochasticWeightAveragingConfig) *StochasticWeightAveraging {
	return newCallback(cfg, newStochasticWeightAveraging)
}

// newStochasticWeightAveraging builds the callback for cfg, filling in the
// defaults its zero values stand for, or reports its bad fields.
func newStochasticWeightAveraging(cfg *StochasticWeightAveragingConfig) (*StochasticWeightAveraging, error) {
	var errs []error
	if len(cfg.SWALRs) == 0 {
		errs = append(errs, errors.New("StochasticWeightAveragingConfig.SWALRs: required: one learning rate > 0, or one per optimizer"))
	}
	for i, lr := range cfg.SWALRs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			errs = append(errs, fmt.Errorf("StochasticWeightAveragingConfig.SWALRs[%d]: must be a finite number > 0, got %v", i, lr))
		}
	}
	switch {
	case cfg.StartEpoch < 0:
		errs = append(errs, fmt.Errorf("StochasticWeightAveragingConfig.StartEpoch: must be >= 1 (counted from 1; 0 uses StartFraction), got %d", cfg.StartEpoch))
	case cfg.StartEpoch > 0 && cfg.StartFraction != 0:
		errs = append(errs, fmt.Errorf("StochasticWeightAveragingConfig: set StartEpoch (%d) or StartFraction (%v), not both", cfg.StartEpoch, cfg.StartFraction))
	case cfg.StartEpoch == 0 && cfg.StartFraction == 0:
		cfg.StartFraction = 0.8
	case cfg.StartEpoch == 0 && !(cfg.StartFraction > 0 && cfg.StartFraction <= 1):
		errs = append(errs, fmt.Errorf("StochasticWeightAveragingConfig.StartFraction: must be in (0, 1] (0 means 0.8), got %v", cfg.StartFraction))
	}
	switch {
	case cfg.AnnealingEpochs == 0:
		cfg.AnnealingEpochs = 10
	case cfg.AnnealingEpochs < 0:
		errs = append(errs, fmt.Errorf("StochasticWeightAveragingConfig.AnnealingEpochs: must be >= 1 (0 means 10), got %d", cfg.AnnealingEpochs))
	}
	switch cfg.AnnealingStrategy {
	case "":
		cfg.AnnealingStrategy = "cos"
	case "cos", "linear":
	default:
		errs = append(errs, fmt.Errorf("StochasticWeightAveragingConfig.AnnealingStrategy: unknown %q; valid: \"cos\", \"linear\"", cfg.AnnealingStrategy))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("callback.NewStochasticWeightAveraging: %w", err)
	}
	return &StochasticWeightAveraging{avg: averages{prefix: "/volt/swa"}, state: swaState{LatestEpoch: -1}}, nil
}

// AveragePath returns the store variable that holds the mean of the module
// variable at path.
func (s *StochasticWeightAveraging) AveragePath(path string) string { return s.avg.path(path) }

// StartEpochIndex returns the first averaged epoch of the current Fit,
// counted from 0 (valid from OnFitStart on).
func (s *StochasticWeightAveraging) StartEpochIndex() int { return s.start }

// OnFitStart resolves the averaged epochs and resets the state, unless it
// was just loaded from a checkpoint.
func (s *StochasticWeightAveraging) OnFitStart(t *volt.Trainer) error {
	s.t = t
	maxEpochs := t.MaxEpochs()
	if maxEpochs <= 0 {
		return fmt.Errorf("StochasticWeightAveraging needs a finite number of epochs: set Config.MaxEpochs (got %d)", maxEpochs)
	}
	if n := len(t.Optimizers()); len(s.cfg.SWALRs) != 1 && len(s.cfg.SWALRs) != n {
		return fmt.Errorf("StochasticWeightAveragingConfig.SWALRs has %d rates for %d optimizers; give one, or one per optimizer", len(s.cfg.SWALRs), n)
	}
	if s.cfg.StartEpoch > 0 {
		s.start = s.cfg.StartEpoch - 1
	} else {
		s.start = max(int(float64(maxEpochs)*s.cfg.StartFraction)-1, 0)
	}
	s.end = maxEpochs - 1
	if s.start > s.end {
		t.Slog().Warn("volt: StochasticWeightAveraging starts after the last epoch; nothing will be averaged",
			"start_epoch", s.start+1, "max_epochs", maxEpochs)
	}
	for i, o := range t.Optimizers() {
		if o.Scheduler != nil && o.Interval == volt.IntervalStep {
			t.Slog().Warn("volt: StochasticWeightAveraging sets the learning rate at each epoch start; optimizer's step-interval scheduler overrides it within the epoch", "optimizer", i)
		}
	}
	if !s.loaded {
		s.state = swaState{LatestEpoch: -1}
		if err := t.Store().DeleteVariablesInScope(s.avg.prefix); err != nil {
			return fmt.Errorf("StochasticWeightAveraging: clearing a previous average: %w", err)
		}
	}
	s.loaded = false
	return nil
}

// OnTrainEpochStart sets the annealed learning rates in averaging epochs.
func (s *StochasticWeightAveraging) OnTrainEpochStart(t *volt.Trainer) error {
	e := t.CurrentEpoch()
	if e < s.start || e > s.end {
		return nil
	}
	if r := s.state.RatesSetEpoch; r != nil && *r == e {
		return nil // resumed inside the epoch: the restored rates are the run's
	}
	if s.state.LR0 == nil {
		s.state.LR0 = t.LearningRates()
	}
	for i, lr0 := range s.state.LR0 {
		if err := t.SetLearningRate(i, s.LearningRate(i, lr0, e-s.start)); err != nil {
			return fmt.Errorf("StochasticWeightAveraging: %w", err)
		}
	}
	s.state.RatesSetEpoch = &e
	return nil
}

// LearningRate returns optimizer opt's rate k epochs after averaging began
// with rate lr0 (torch's SWALR).
func (s *StochasticWeightAveraging) LearningRate(opt int, lr0 float64, k int) float64 {
	swaLR := s.cfg.SWALRs[0]
	if len(s.cfg.SWALRs) > 1 {
		swaLR = s.cfg.SWALRs[opt]
	}
	x := min(float64(k)/float64(s.cfg.AnnealingEpochs), 1)
	alpha := x
	if s.cfg.AnnealingStrategy == "cos" {
		alpha = (1 - math.Cos(math.Pi*x)) / 2
	}
	return (1-alpha)*lr0 + alpha*swaLR
}

// OnTrainEpochEnd folds the epoch's weights into the mean.
func (s *StochasticWeightAveraging) OnTrainEpochEnd(t *volt.Trainer) error { return s.catchUp(t) }

// catchUp averages the epoch that is ending, if it is an averaging epoch not
// averaged yet.
func (s *StochasticWeightAveraging) catchUp(t *volt.Trainer) error {
	p := t.Progress()
	if p.At != volt.PointTrainEpochEnd || p.Epoch.Total.Processed <= p.Epoch.Total.Completed {
		return nil // not between an epoch's last batch and its end
	}
	e := t.CurrentEpoch()
	if e < s.start || e > s.end || e <= s.state.LatestEpoch {
		return nil
	}
	mean := func(avg, w float64, n int64) float64 { return avg + (w-avg)/float64(n+1) }
	if err := s.avg.update(t.Store(), mean); err != nil {
		return fmt.Errorf("StochasticWeightAveraging: %w", err)
	}
	s.state.LatestEpoch = e
	return nil
}

// OnTrainEnd replaces the weights with their mean.
func (s *StochasticWeightAveraging) OnTrainEnd(t *volt.Trainer) error {
	n, err := s.avg.count(t.Store())
	if err != nil || n == 0 {
		return err
	}
	if _, err := s.avg.copyTo(t.Store(), false); err != nil {
		return fmt.Errorf("StochasticWeightAveraging: copying the mean into the weights: %w", err)
	}
	return nil
}

// StateKey implements volt.Stateful; it names the settings.
func (s *StochasticWeightAveraging) StateKey() string {
	lrs := make([]string, len(s.cfg.SWALRs))
	for i, lr := range s.cfg.SWALRs {
		lrs[i] = strconv.FormatFloat(lr, 'g', -1, 64)
	}
	return fmt.Sprintf("StochasticWeightAveraging{swa_lrs=[%s],start=%d/%v,annealing=%d/%s}", strings.Join(lrs, " "),
		s.cfg.StartEpoch, s.cfg.StartFraction, s.cfg.AnnealingEpochs, s.cfg.AnnealingStrategy)
}

// State implements volt.Stateful. The mean itself is in the store; a
// checkpoint taken at OnTrainEpochEnd by a callback listed before this one
// still gets the epoch's weights, which State folds in first.
func (s *StochasticWeightAveraging) State() ([]byte, error) {
	if s.t != nil && s.t.State().Fn == volt.StageFit {
		if err := s.catchUp(s.t); err != nil {
			return nil, err
		}
	}
	return json.Marshal(s.state)
}

// LoadState implements volt.Stateful; the loaded state survives the next OnFitStart.
func (s *StochasticWeightAveraging) LoadState(b []byte) error {
	st := swaState{LatestEpoch: -1}
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("StochasticWeightAveraging.LoadState: %w", err)
	}
	s.state, s.loaded = st, true
	return nil
}

// Interface guards.
var (
	_ volt.OnFitStart        = (*StochasticWeightAveraging)(nil)
	_ volt.OnTrainEpochStart = (*StochasticWeightAveraging)(nil)
	_ volt.OnTrainEpochEnd   = (*StochasticWeightAveraging)(nil)
	_ volt.OnTrainEnd        = (*StochasticWeightAveraging)(nil)
	_ volt.Stateful          = (*StochasticWeightAveraging)(nil)
)

// Config returns the configuration in effect: the one given, with the zero
// values that mean a default replaced by that default (StartFraction 0.8
// when no StartEpoch is set, AnnealingEpochs 10, AnnealingStrategy "cos").
func (s *StochasticWeightAveraging) Config() StochasticWeightAveragingConfig { return s.cfg }
