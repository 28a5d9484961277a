package callback

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"golang.org/x/term"
)

// ProgressBar shows training progress (Lightning's TQDMProgressBar).
//
// On a terminal it draws one bar per training epoch ("Epoch 3/9", 0-based
// of MaxEpochs-1 as in Lightning) with batches done, it/s, elapsed and
// remaining time, the running mean of the last 20 losses it read and every
// value logged with volt.ProgBar. Validation gets its own bar on the line
// below, cleared when it ends; Validate, Test and Predict runs get one bar
// each. A bar is redrawn on a time budget, as tqdm does: after a batch only
// when RefreshInterval has passed since its last redraw, and always in its
// final state; never per batch. Elsewhere (a file, a pipe) it writes plain
// lines without control characters: one per epoch end, and with Every > 0
// one every Every optimization steps.
//
// volt draws no progress bar unless this callback is in Config.Callbacks.
type ProgressBar struct {
	cfg       ProgressBarConfig
	terminal  bool
	now       func() time.Time         // the clock of the refresh budget
	train     *progressbar.ProgressBar // the epoch's bar, nil between epochs
	trainDone int                      // batches of the epoch done
	trainDraw time.Time                // last redraw of the training bar
	eval      *progressbar.ProgressBar
	evalDone  int
	evalDraw  time.Time // last redraw of the evaluation bar
	below     bool      // eval bar drawn on the line below the training bar
	losses    []float64 // last losses read, for the running loss
	lastLine  int64     // last step with a plain line
	desc      string
}

// ProgressBarConfig configures ProgressBar.
type ProgressBarConfig struct {
	// Writer receives the output; nil means os.Stderr.
	Writer io.Writer
	// RefreshInterval is the least time between two redraws of a bar
	// after a batch; 0 means DefaultRefreshInterval. A bar's final state is
	// always drawn. Each redraw of the training bar reads the batch's loss
	// from the device.
	RefreshInterval time.Duration
	// Every writes, when not on a terminal, a line every n optimization
	// steps; 0 writes only the epoch lines.
	Every int
	// ForceTerminal overrides the detection of a terminal (for tests, or to
	// draw bars into a file).
	ForceTerminal *bool
}

// runningLossWindow is the number of losses averaged in the running loss.
const runningLossWindow = 20

// DefaultRefreshInterval is ProgressBarConfig.RefreshInterval's default:
// tqdm's mininterval.
const DefaultRefreshInterval = 100 * time.Millisecond

// NewProgressBar validates cfg and returns the callback.
func NewProgressBar(cfg ProgressBarConfig) (*ProgressBar, error) {
	if cfg.RefreshInterval < 0 {
		return nil, fmt.Errorf("callback.NewProgressBar: ProgressBarConfig.RefreshInterval: must be >= 0 (0 means %v), got %v",
			DefaultRefreshInterval, cfg.RefreshInterval)
	}
	if cfg.Every < 0 {
		return nil, fmt.Errorf("callback.NewProgressBar: ProgressBarConfig.Every: must be >= 0 (0: epoch lines only), got %d", cfg.Every)
	}
	if cfg.RefreshInterval == 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.Writer == nil {
		cfg.Writer = os.Stderr
	}
	return &ProgressBar{cfg: cfg, now: time.Now}, nil
}

// due reports whether a bar last redrawn at *last may be redrawn now, and
// if so takes now as its last redraw.
func (p *ProgressBar) due(last *time.Time) bool {
	now := p.now()
	if now.Sub(*last) < p.cfg.RefreshInterval {
		return false
	}
	*last = now
	return true
}

// isTerminal reports whether w is a terminal, unless ForceTerminal says.
func (p *ProgressBar) isTerminal() bool {
	if p.cfg.ForceTerminal != nil {
		return *p.cfg.ForceTerminal
	}
	f, ok := p.cfg.Writer.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// Setup decides between bars and lines and resets the per-run state.
func (p *ProgressBar) Setup(t *volt.Trainer, stage volt.Stage) error {
	if !t.IsGlobalZero() {
		p.cfg.Writer = io.Discard // rank 0 alone shows progress in a data-parallel job
	}
	p.terminal = p.isTerminal()
	p.train, p.eval, p.below, p.losses, p.lastLine = nil, nil, false, nil, -1
	return nil
}

func (p *ProgressBar) newBar(max int, desc string) *progressbar.ProgressBar {
	if max <= 0 {
		max = -1
	}
	return progressbar.NewOptions(max,
		progressbar.OptionSetWriter(p.cfg.Writer),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(25),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionSetSpinnerChangeInterval(0), // no drawing goroutine
		progressbar.OptionSetRenderBlankState(true),
	)
}

// epochDesc is "Epoch i/N" (or "Epoch i" without an epoch limit).
func epochDesc(t *volt.Trainer) string {
	if n := t.MaxEpochs(); n > 0 {
		return fmt.Sprintf("Epoch %d/%d", t.CurrentEpoch(), n-1)
	}
	return fmt.Sprintf("Epoch %d", t.CurrentEpoch())
}

// metricsText renders name=value pairs sorted by name.
func metricsText(m map[string]float64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, " %s=%.4g", k, m[k])
	}
	return b.String()
}

// trainText is the training bar's description.
func (p *ProgressBar) trainText(t *volt.Trainer) string {
	s := p.desc + ":"
	if len(p.losses) > 0 {
		var sum float64
		for _, l := range p.losses {
			sum += l
		}
		s += fmt.Sprintf(" loss=%.4g", sum/float64(len(p.losses)))
	}
	return s + metricsText(t.ProgressBarMetrics())
}

// OnTrainEpochStart opens the epoch's bar.
func (p *ProgressBar) OnTrainEpochStart(t *volt.Trainer) error {
	p.desc = epochDesc(t)
	if p.terminal {
		p.train, p.trainDone = p.newBar(t.NumTrainingBatches(), p.trainText(t)), 0
		p.trainDraw = p.now()
	}
	return nil
}

// OnTrainBatchEnd advances the bar (redrawn when RefreshInterval has passed
// since its last redraw, and at the epoch's last batch), or writes a plain
// line every Every steps.
func (p *ProgressBar) OnTrainBatchEnd(t *volt.Trainer, out *volt.StepOutput, _ *data.Batch, batchIdx int) error {
	if !p.terminal {
		step := t.GlobalStep()
		if p.cfg.Every > 0 && step > 0 && step%int64(p.cfg.Every) == 0 && step != p.lastLine {
			p.lastLine = step
			batches := fmt.Sprint(batchIdx + 1)
			if n := t.NumTrainingBatches(); n > 0 {
				batches += fmt.Sprintf("/%d", n)
			}
			_, err := fmt.Fprintf(p.cfg.Writer, "%s batch %s step %d%s\n", strings.ToLower(p.desc), batches, step, metricsText(t.ProgressBarMetrics()))
			return err
		}
		return nil
	}
	if p.train != nil {
		p.trainDone = batchIdx + 1
	}
	if p.train == nil {
		return nil
	}
	if batchIdx+1 == t.NumTrainingBatches() {
		p.trainDraw = p.now()
	} else if !p.due(&p.trainDraw) {
		return nil
	}
	if l := out.Loss(); l == l { // not NaN
		p.losses = append(p.losses, l)
		if len(p.losses) > runningLossWindow {
			p.losses = p.losses[1:]
		}
	}
	return p.drawTrain(t)
}

// drawTrain redraws the training bar at the batches done so far.
func (p *ProgressBar) drawTrain(t *volt.Trainer) error {
	p.train.Describe(p.trainText(t))
	// A bar that reaches its max is finished and no longer redrawn: hold the
	// last batch back until OnTrainEpochEnd, when the validation metrics are in.
	done := p.trainDone
	if n := t.NumTrainingBatches(); n > 0 && done >= n {
		done = n - 1
	}
	return p.train.Set(done)
}

// OnTrainEpochEnd closes the epoch's bar, or writes the epoch line.
func (p *ProgressBar) OnTrainEpochEnd(t *volt.Trainer) error {
	if !p.terminal {
		_, err := fmt.Fprintf(p.cfg.Writer, "%s step %d%s\n", strings.ToLower(p.desc), t.GlobalStep(), metricsText(t.ProgressBarMetrics()))
		return err
	}
	if p.train == nil {
		return nil
	}
	p.train.Describe(p.trainText(t))
	var err error
	if n := t.NumTrainingBatches(); n > 0 && p.trainDone < n {
		// Stopped early (MaxSteps, a callback): the bar keeps its count.
		err = p.train.Set(p.trainDone)
	} else {
		err = p.train.Finish()
	}
	p.train = nil
	_, werr := io.WriteString(p.cfg.Writer, "\n")
	if err == nil {
		err = werr
	}
	return err
}

// startEval opens the bar of an evaluation or prediction run.
func (p *ProgressBar) startEval(t *volt.Trainer, desc string) {
	if !p.terminal {
		return
	}
	total := 0
	for _, n := range t.NumEvalBatches() {
		if n < 0 {
			total = -1
			break
		}
		total += n
	}
	if t.State().Stage == volt.RunningSanityCheck {
		total = -1 // only NumSanityValSteps of them run
	}
	p.below = p.train != nil
	if p.below {
		// The training bar stays in view above: show where training stands.
		p.trainDraw = p.now()
		p.drawTrain(t)
		io.WriteString(p.cfg.Writer, "\n")
	}
	p.eval, p.evalDone = p.newBar(total, desc), 0
	p.evalDraw = p.now()
}

// evalBatch advances the evaluation bar, redrawn when RefreshInterval has
// passed since its last redraw (endEval draws its final state).
func (p *ProgressBar) evalBatch() error {
	if p.eval == nil {
		return nil
	}
	p.evalDone++
	if !p.due(&p.evalDraw) {
		return nil
	}
	return p.eval.Set(p.evalDone)
}

// endEval clears the bar of a validation inside Fit (going back up to the
// training bar when it was drawn below it), or leaves the bar of a
// Validate, Test or Predict run finished on its line.
func (p *ProgressBar) endEval(t *volt.Trainer) error {
	if p.eval == nil {
		return nil
	}
	bar := p.eval
	p.eval = nil
	if t.State().Fn != volt.StageFit {
		err := bar.Finish()
		io.WriteString(p.cfg.Writer, "\n")
		return err
	}
	if err := bar.Clear(); err != nil || !p.below {
		return err
	}
	// Back to the training bar's line, which the next redraw overwrites.
	_, err := io.WriteString(p.cfg.Writer, "\x1b[1A\r")
	return err
}

func evalDesc(t *volt.Trainer, name string) string {
	if t.State().Stage == volt.RunningSanityCheck {
		return "Sanity Checking"
	}
	return name
}

// OnValidationStart opens the validation bar.
func (p *ProgressBar) OnValidationStart(t *volt.Trainer) error {
	p.startEval(t, evalDesc(t, "Validation"))
	return nil
}

// OnValidationBatchEnd advances the validation bar.
func (p *ProgressBar) OnValidationBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int, int) error {
	return p.evalBatch()
}

// OnValidationEnd clears the validation bar.
func (p *ProgressBar) OnValidationEnd(t *volt.Trainer) error {
	if err := p.endEval(t); err != nil {
		return err
	}
	if p.train != nil {
		p.train.Describe(p.trainText(t))
	}
	return nil
}

// OnTestStart opens the test bar.
func (p *ProgressBar) OnTestStart(t *volt.Trainer) error { p.startEval(t, "Testing"); return nil }

// OnTestBatchEnd advances the test bar.
func (p *ProgressBar) OnTestBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int, int) error {
	return p.evalBatch()
}

// OnTestEnd closes the test bar.
func (p *ProgressBar) OnTestEnd(t *volt.Trainer) error { return p.endEval(t) }

// OnPredictStart opens the prediction bar.
func (p *ProgressBar) OnPredictStart(t *volt.Trainer) error { p.startEval(t, "Predicting"); return nil }

// OnPredictBatchEnd advances the prediction bar.
func (p *ProgressBar) OnPredictBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int, int) error {
	return p.evalBatch()
}

// OnPredictEnd closes the prediction bar.
func (p *ProgressBar) OnPredictEnd(t *volt.Trainer) error { return p.endEval(t) }

// OnException ends the line of an open bar, so the error starts on its own.
func (p *ProgressBar) OnException(t *volt.Trainer, err error) {
	if p.terminal && (p.train != nil || p.eval != nil) {
		io.WriteString(p.cfg.Writer, "\n")
	}
	p.train, p.eval = nil, nil
}

// Interface guards.
var (
	_ volt.Setup                = (*ProgressBar)(nil)
	_ volt.OnTrainEpochStart    = (*ProgressBar)(nil)
	_ volt.OnTrainBatchEnd      = (*ProgressBar)(nil)
	_ volt.OnTrainEpochEnd      = (*ProgressBar)(nil)
	_ volt.OnValidationStart    = (*ProgressBar)(nil)
	_ volt.OnValidationBatchEnd = (*ProgressBar)(nil)
	_ volt.OnValidationEnd      = (*ProgressBar)(nil)
	_ volt.OnTestStart          = (*ProgressBar)(nil)
	_ volt.OnTestBatchEnd       = (*ProgressBar)(nil)
	_ volt.OnTestEnd            = (*ProgressBar)(nil)
	_ volt.OnPredictStart       = (*ProgressBar)(nil)
	_ volt.OnPredictBatchEnd    = (*ProgressBar)(nil)
	_ volt.OnPredictEnd         = (*ProgressBar)(nil)
	_ volt.OnException          = (*ProgressBar)(nil)
)
