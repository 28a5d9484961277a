package callback

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// EMAWeightAveraging keeps an exponential moving average of the module's
// weights during Fit, validates with it and hands it over at the end
// (Lightning's EMAWeightAveraging, built on torch's AveragedModel).
//
// After each optimizer step that is due (see UpdateEvery and StartStep) the
// average becomes ema = Decay·ema + (1−Decay)·w for every module variable;
// the first update copies the weights. The average lives in store variables
// under "/volt/ema/…", so checkpoints save it and a resumed run continues it
// exactly. Every validation run (in Fit and in Validate) sees the averaged
// weights: they are swapped in at OnValidationEpochStart and the trained
// weights back at OnValidationEpochEnd, so checkpoints written at
// OnValidationEnd hold the trained weights. At OnTrainEnd the average is
// copied into the weights (CopyToModel).
//
// Cost: each update reads every module variable to the host and updates the
// average there in float64 (see averages); raise UpdateEvery for large
// models on accelerators.
type EMAWeightAveraging struct {
	configured[EMAWeightAveragingConfig]
	avg     averages
	t       *volt.Trainer
	state   emaState
	loaded  bool
	swapped map[*model.Variable]*tensors.Tensor // trained weights while the average is swapped in
}

// EMAWeightAveragingConfig configures EMAWeightAveraging.
type EMAWeightAveragingConfig struct {
	// Decay is the weight of the old average, in (0, 1); 0 means 0.999.
	Decay float64
	// UpdateEvery updates the average after every n-th optimizer step (the
	// steps s with (s−1) mod n = 0, counting from 1, as Lightning's
	// update_every_n_steps); 0 means 1.
	UpdateEvery int
	// StartStep skips the updates before optimizer step StartStep (counted
	// from 0, as Lightning's update_starting_at_step).
	StartStep int64
	// UseForValidation validates with the averaged weights; nil means true.
	UseForValidation *bool
	// CopyToModel copies the average into the weights at OnTrainEnd; nil
	// means true (Lightning always does).
	CopyToModel *bool
}

// emaState is what the callback keeps besides the store variables.
type emaState struct {
	LatestStep int64 `json:"latest_update_step"`
}

// NewEMAWeightAveraging returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewEMAWeightAveraging(cfg EMAWeightAveragingConfig) *EMAWeightAveraging {
	return newCallback(cfg, newEMAWeightAveraging)
}

// Config returns the configuration in effect: NewEMAWeightAveraging's, with the defaults
// its zero values stand for filled in (print-config shows it).
func (e *EMAWeightAveraging) Config() EMAWeightAveragingConfig { return e.cfg }

// newEMAWeightAveraging builds the callback for cfg, filling in the defaults
// its zero values stand for, or reports its bad fields.
func newEMAWeightAveraging(cfg *EMAWeightAveragingConfig) (*EMAWeightAveraging, error) {
	var errs []error
	switch {
	case cfg.Decay == 0:
		cfg.Decay = 0.999
	case !(cfg.Decay > 0 && cfg.Decay < 1):
		errs = append(errs, fmt.Errorf("EMAWeightAveragingConfig.Decay: must be in (0, 1) (0 means 0.999), got %v", cfg.Decay))
	}
	switch {
	case cfg.UpdateEvery == 0:
		cfg.UpdateEvery = 1
	case cfg.UpdateEvery < 0:
		errs = append(errs, fmt.Errorf("EMAWeightAveragingConfig.UpdateEvery: must be >= 1 (0 means 1), got %d", cfg.UpdateEvery))
	}
	if cfg.StartStep < 0 {
		errs = append(errs, fmt.Errorf("EMAWeightAveragingConfig.StartStep: must be >= 0, got %d", cfg.StartStep))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("callback.NewEMAWeightAveraging: %w", err)
	}
	if cfg.UseForValidation == nil {
		cfg.UseForValidation = volt.Ptr(true)
	}
	if cfg.CopyToModel == nil {
		cfg.CopyToModel = volt.Ptr(true)
	}
	return &EMAWeightAveraging{avg: averages{prefix: "/volt/ema"}}, nil
}

// AveragePath returns the store variable that holds the average of the
// module variable at path.
func (e *EMAWeightAveraging) AveragePath(path string) string { return e.avg.path(path) }

// NumAveraged returns the number of updates folded into the trainer's
// average (0 before the first).
func (e *EMAWeightAveraging) NumAveraged(t *volt.Trainer) (int64, error) {
	if t.Store() == nil {
		return 0, nil
	}
	return e.avg.count(t.Store())
}

// OnFitStart resets the state, unless it was just loaded from a checkpoint
// (whose store variables then hold the average).
func (e *EMAWeightAveraging) OnFitStart(t *volt.Trainer) error {
	e.t = t
	if !e.loaded {
		e.state = emaState{}
		if err := t.Store().DeleteVariablesInScope(e.avg.prefix); err != nil {
			return fmt.Errorf("EMAWeightAveraging: clearing a previous average: %w", err)
		}
	}
	e.loaded = false
	return nil
}

// OnTrainBatchEnd updates the average after a due optimizer step.
func (e *EMAWeightAveraging) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	return e.catchUp(t)
}

// catchUp folds in the weights of the last optimizer step if it is due and
// not folded in yet.
func (e *EMAWeightAveraging) catchUp(t *volt.Trainer) error {
	step := t.GlobalStep()
	if step <= e.state.LatestStep || !e.due(step-1) {
		return nil
	}
	d := e.cfg.Decay
	if err := e.avg.update(t.Store(), func(avg, w float64, _ int64) float64 { return d*avg + (1-d)*w }); err != nil {
		return fmt.Errorf("EMAWeightAveraging: %w", err)
	}
	e.state.LatestStep = step
	return nil
}

// due reports whether the step with 0-based index idx updates the average.
func (e *EMAWeightAveraging) due(idx int64) bool {
	return idx >= e.cfg.StartStep && idx%int64(e.cfg.UpdateEvery) == 0
}

// OnValidationEpochStart swaps the averaged weights in.
func (e *EMAWeightAveraging) OnValidationEpochStart(t *volt.Trainer) error {
	if !*e.cfg.UseForValidation || e.swapped != nil || t.Store() == nil {
		return nil
	}
	if n, err := e.avg.count(t.Store()); err != nil || n == 0 {
		return err
	}
	old, err := e.avg.copyTo(t.Store(), true)
	e.swapped = old
	if err != nil {
		return fmt.Errorf("EMAWeightAveraging: swapping the average in: %w", errors.Join(err, e.swapBack()))
	}
	return nil
}

// OnValidationEpochEnd swaps the trained weights back.
func (e *EMAWeightAveraging) OnValidationEpochEnd(*volt.Trainer) error { return e.swapBack() }

func (e *EMAWeightAveraging) swapBack() error {
	if e.swapped == nil {
		return nil
	}
	old := e.swapped
	e.swapped = nil
	if err := restore(old); err != nil {
		return fmt.Errorf("EMAWeightAveraging: swapping the trained weights back: %w", err)
	}
	return nil
}

// OnException puts the trained weights back when a validation run failed
// with the average swapped in.
func (e *EMAWeightAveraging) OnException(t *volt.Trainer, _ error) {
	if err := e.swapBack(); err != nil {
		t.Slog().Error("volt: " + err.Error())
	}
}

// OnTrainEnd copies the average into the weights (CopyToModel).
func (e *EMAWeightAveraging) OnTrainEnd(t *volt.Trainer) error {
	if err := e.catchUp(t); err != nil {
		return err
	}
	if !*e.cfg.CopyToModel {
		return nil
	}
	if n, err := e.avg.count(t.Store()); err != nil || n == 0 {
		return err
	}
	if _, err := e.avg.copyTo(t.Store(), false); err != nil {
		return fmt.Errorf("EMAWeightAveraging: copying the average into the weights: %w", err)
	}
	return nil
}

// StateKey implements volt.Stateful; it names the decay and cadence.
func (e *EMAWeightAveraging) StateKey() string {
	return fmt.Sprintf("EMAWeightAveraging{decay=%s,every=%d,start=%d}",
		strconv.FormatFloat(e.cfg.Decay, 'g', -1, 64), e.cfg.UpdateEvery, e.cfg.StartStep)
}

// State implements volt.Stateful. The average itself is in the store; a
// checkpoint taken at OnTrainBatchEnd by a callback listed before this one
// still gets the step's update, which State folds in first.
func (e *EMAWeightAveraging) State() ([]byte, error) {
	if e.t != nil && e.t.State().Fn == volt.StageFit {
		if err := e.catchUp(e.t); err != nil {
			return nil, err
		}
	}
	return json.Marshal(e.state)
}

// LoadState implements volt.Stateful; the loaded state survives the next OnFitStart.
func (e *EMAWeightAveraging) LoadState(b []byte) error {
	var s emaState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("EMAWeightAveraging.LoadState: %w", err)
	}
	e.state, e.loaded = s, true
	return nil
}

// Interface guards.
var (
	_ volt.OnFitStart             = (*EMAWeightAveraging)(nil)
	_ volt.OnTrainBatchEnd        = (*EMAWeightAveraging)(nil)
	_ volt.OnValidationEpochStart = (*EMAWeightAveraging)(nil)
	_ volt.OnValidationEpochEnd   = (*EMAWeightAveraging)(nil)
	_ volt.OnException            = (*EMAWeightAveraging)(nil)
	_ volt.OnTrainEnd             = (*EMAWeightAveraging)(nil)
	_ volt.Stateful               = (*EMAWeightAveraging)(nil)
)
