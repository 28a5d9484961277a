package callback

import (
	"fmt"
	"io"
	"os"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// ModelSummary prints a table of the model's variables, grouped by scope,
// once per Fit (Lightning's ModelSummary), with a chosen depth and writer;
// it replaces the trainer's default summary.
//
// GoMLX creates variables when the training step is traced; the trainer
// traces it before OnTrainStart, where the table is printed (after the first
// batch when that was not possible). volt's own variables (under "/volt/":
// optimizer state, learning rates) and GoMLX's random-number state are left
// out.
type ModelSummary struct {
	configured[ModelSummaryConfig]
	printed bool
}

// ModelSummaryConfig configures ModelSummary.
type ModelSummaryConfig struct {
	// MaxDepth is how many scope levels get a row: 1 (default when 0) shows
	// the top-level scopes, -1 every scope and variable.
	MaxDepth int
	// Writer receives the table; nil means os.Stdout.
	Writer io.Writer
}

// NewModelSummary returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewModelSummary(cfg ModelSummaryConfig) *ModelSummary { return newCallback(cfg, newModelSummary) }

// Config returns the configuration in effect: NewModelSummary's, with the defaults
// its zero values stand for filled in (print-config shows it).
func (s *ModelSummary) Config() ModelSummaryConfig {
	c := s.cfg
	if c.Writer == os.Stdout {
		c.Writer = nil // the default, which a config cannot spell
	}
	return c
}

// newModelSummary builds the callback for cfg, filling in the defaults its
// zero values stand for, or reports its bad fields.
func newModelSummary(cfg *ModelSummaryConfig) (*ModelSummary, error) {
	switch {
	case cfg.MaxDepth < -1:
		return nil, fmt.Errorf("callback.NewModelSummary: ModelSummaryConfig.MaxDepth: must be -1 (all), 0 (default 1) or positive, got %d", cfg.MaxDepth)
	case cfg.MaxDepth == 0:
		cfg.MaxDepth = 1
	}
	if cfg.Writer == nil {
		cfg.Writer = os.Stdout
	}
	return &ModelSummary{}, nil
}

// OnFitStart arms the summary for this Fit.
func (s *ModelSummary) OnFitStart(t *volt.Trainer) error {
	s.printed = false
	return nil
}

// OnTrainStart prints the summary: the trainer has traced the training
// step by then, so the variables exist.
func (s *ModelSummary) OnTrainStart(t *volt.Trainer) error { return s.print(t) }

// OnTrainBatchEnd prints the summary after the first batch if the variables
// did not exist at OnTrainStart (e.g. TBPTT traces per split).
func (s *ModelSummary) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	return s.print(t)
}

// ManagesModelSummary implements volt.ModelSummarizer: this callback
// replaces the trainer's default summary.
func (*ModelSummary) ManagesModelSummary() {}

func (s *ModelSummary) print(t *volt.Trainer) error {
	if s.printed || t.Store() == nil || t.Store().NumVariables() <= 1 {
		return nil
	}
	s.printed = true
	_, err := io.WriteString(s.cfg.Writer, volt.Summarize(t.Store(), s.cfg.MaxDepth).String())
	return err
}

// Interface guards.
var (
	_ volt.OnFitStart      = (*ModelSummary)(nil)
	_ volt.OnTrainStart    = (*ModelSummary)(nil)
	_ volt.OnTrainBatchEnd = (*ModelSummary)(nil)
	_ volt.ModelSummarizer = (*ModelSummary)(nil)
)
