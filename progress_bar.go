package volt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/tqdm"
	"github.com/voltml/volt/logger"
	"golang.org/x/term"
)

// ProgressReporter is implemented by callbacks that show a run's progress
// (ProgressBar): when one is in Config.Callbacks, the trainer adds no
// default progress bar.
type ProgressReporter interface {
	ReportsProgress()
}

// ProgressBar shows a run's progress as Lightning's TQDMProgressBar does;
// the trainer adds one writing to stderr unless Config.EnableProgressBar is
// false or a ProgressReporter is in Config.Callbacks (package callback
// re-exports it as callback.ProgressBar).
//
// On a terminal it draws Lightning's bar lines, fitted to the terminal's
// width at each redraw as tqdm does (the bar takes the room the text leaves;
// a line still too long is cut):
//
//	Epoch 2: 100%|████████| 16/16 [00:01<00:00, 11.61it/s, v_num=0, train_loss=4.390, val_loss=0.00281]
//
// with the logger's version (v_num) and every value logged with ProgBar,
// formatted as Lightning does. One training bar serves the whole Fit,
// reset at each epoch and left on screen when Fit ends; validation inside
// Fit draws a bar below it ("Validation DataLoader 0", "Sanity Checking
// DataLoader 0"), cleared when it ends; Validate, Test and Predict runs
// leave theirs ("Testing DataLoader 0"). A bar is redrawn on a time budget:
// after a batch only when RefreshInterval has passed since its last redraw,
// and always in its final state. volt's console messages (see Config.Log)
// start on a line of their own below the bar.
//
// Elsewhere (a file, a pipe) it writes plain lines without control
// characters: one per epoch end, and with Every > 0 one every Every
// optimization steps ("epoch 0 step 860 train_loss=0.1291 val_loss=0.09432
// val_acc=0.972": the epoch counted from 0 as on the bar, the values in the
// order first logged, as Lightning's bar lists them).
type ProgressBar struct {
	invalid  error // the bad fields of the configuration (NewProgressBar), or nil
	cfg      ProgressBarConfig
	terminal bool
	now      func() time.Time // the clock of bars and of the refresh budget
	train    *barLine         // Fit's training bar, nil outside Fit
	eval     *barLine         // the bar of an evaluation or prediction loop
	below    bool             // eval drawn on the line below train
	open     bool             // a bar line is on screen without its newline
	lastLen  int              // runes of the line last drawn, to blank its rest
	lastLine int64            // last step with a plain line
	desc     string           // the epoch's plain-line name
	vNum     []tqdm.Item      // v_num, or nothing without a versioned logger
}

// barLine is one bar: what it counts and when it was last drawn.
type barLine struct {
	desc     string
	kind     string // "Validation", "Testing", …: desc without the loader
	loader   int    // evaluation loader index
	n, total int
	start    time.Time
	drawn    time.Time
	postfix  bool // shows v_num and the ProgBar values
	width    int  // runes of its last drawing
}

// ProgressBarConfig configures ProgressBar.
type ProgressBarConfig struct {
	// Writer receives the output; nil means os.Stderr (Lightning draws on
	// stdout; volt keeps stdout for the program's results, and a program's
	// Example output free of progress lines).
	Writer io.Writer
	// RefreshInterval is the least time between two redraws of a bar
	// after a batch; 0 means DefaultRefreshInterval. A bar's final state is
	// always drawn.
	RefreshInterval time.Duration
	// Every writes, when not on a terminal, a line every n optimization
	// steps; 0 writes only the epoch lines.
	Every int
	// ForceTerminal overrides the detection of a terminal (for tests, or to
	// draw bars into a file).
	ForceTerminal *bool
	// Columns is the width bar lines are fitted to; 0 means the terminal's
	// (read at each redraw), else $COLUMNS, else no limit (a bar of 10
	// cells, as tqdm).
	Columns int
}

// DefaultRefreshInterval is ProgressBarConfig.RefreshInterval's default:
// tqdm's mininterval.
const DefaultRefreshInterval = 100 * time.Millisecond

// NewProgressBar returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewProgressBar(cfg ProgressBarConfig) *ProgressBar {
	p, err := newProgressBar(cfg)
	if err != nil {
		return &ProgressBar{cfg: cfg, invalid: err}
	}
	return p
}

// Validate reports the bad fields of the configuration NewProgressBar was given,
// as NewTrainer does, or nil.
func (p *ProgressBar) Validate() error { return p.invalid }

// Config returns the configuration in effect: NewProgressBar's, with the defaults
// its zero values stand for filled in (print-config shows it).
func (p *ProgressBar) Config() ProgressBarConfig {
	c := p.cfg
	if c.Writer == os.Stderr {
		c.Writer = nil // the default, which a config cannot spell
	}
	return c
}

// newProgressBar builds the callback for cfg, or reports cfg's bad fields.
func newProgressBar(cfg ProgressBarConfig) (*ProgressBar, error) {
	if cfg.RefreshInterval < 0 {
		return nil, fmt.Errorf("NewProgressBar: ProgressBarConfig.RefreshInterval: must be >= 0 (0 means %v), got %v",
			DefaultRefreshInterval, cfg.RefreshInterval)
	}
	if cfg.Every < 0 {
		return nil, fmt.Errorf("NewProgressBar: ProgressBarConfig.Every: must be >= 0 (0: epoch lines only), got %d", cfg.Every)
	}
	if cfg.Columns < 0 {
		return nil, fmt.Errorf("NewProgressBar: ProgressBarConfig.Columns: must be >= 0 (0: the terminal's width), got %d", cfg.Columns)
	}
	if cfg.RefreshInterval == 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.Writer == nil {
		cfg.Writer = os.Stderr
	}
	return &ProgressBar{cfg: cfg, now: time.Now}, nil
}

// ReportsProgress marks ProgressBar as a ProgressReporter.
func (p *ProgressBar) ReportsProgress() {}

// SetClock makes p read the time from now (for tests).
func (p *ProgressBar) SetClock(now func() time.Time) { p.now = now }

// isTerminal reports whether w is a terminal, unless ForceTerminal says.
func (p *ProgressBar) isTerminal() bool {
	if p.cfg.ForceTerminal != nil {
		return *p.cfg.ForceTerminal
	}
	return isTerminal(p.cfg.Writer)
}

// isTerminal reports whether w is a file on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// columns is the width to fit lines to (0: no limit).
func (p *ProgressBar) columns() int {
	if p.cfg.Columns > 0 {
		return p.cfg.Columns
	}
	if f, ok := p.cfg.Writer.(interface{ Fd() uintptr }); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// Setup decides between bars and lines and resets the per-run state.
func (p *ProgressBar) Setup(t *Trainer, stage Stage) error {
	if !t.IsGlobalZero() {
		p.cfg.Writer = io.Discard // rank 0 alone shows progress in a data-parallel job
	}
	p.terminal = p.isTerminal()
	p.train, p.eval, p.below, p.open, p.lastLine = nil, nil, false, false, -1
	p.vNum = versionItem(t.Loggers())
	if p.terminal {
		console.attach(p)
	}
	return nil
}

// Teardown ends an open line and leaves the console.
func (p *ProgressBar) Teardown(t *Trainer, stage Stage) error {
	console.detach(p)
	return p.endLine()
}

// versionItem is Lightning's v_num: the loggers' versions (joined with "_"
// when they differ), the last 4 characters of a named version directory.
func versionItem(loggers []logger.Logger) []tqdm.Item {
	var versions []string
	for _, l := range loggers {
		v, ok := l.(interface{ Version() int })
		if !ok {
			continue
		}
		s := strconv.Itoa(v.Version())
		if v.Version() < 0 {
			d, ok := l.(logger.Direr)
			if !ok {
				continue
			}
			s = filepath.Base(d.LogDir())
			if len(s) > 4 {
				s = s[len(s)-4:]
			}
		}
		if !slices.Contains(versions, s) {
			versions = append(versions, s)
		}
	}
	if len(versions) == 0 {
		return nil
	}
	return []tqdm.Item{{Name: "v_num", Value: strings.Join(versions, "_")}}
}

// postfix is v_num and the ProgBar values, in logging order (Lightning's
// get_metrics: v_num, then progress_bar_metrics as a dict keeps them).
func (p *ProgressBar) postfix(t *Trainer) []tqdm.Item {
	m := t.ProgressBarMetrics()
	items := slices.Clone(p.vNum)
	for _, k := range t.progressBarKeys() {
		items = append(items, tqdm.Item{Name: k, Value: tqdm.Num(m[k])})
	}
	return items
}

// draw redraws b on the current line.
func (p *ProgressBar) draw(t *Trainer, b *barLine) error {
	now := p.now()
	b.drawn = now
	var items []tqdm.Item
	if b.postfix {
		items = p.postfix(t)
	}
	line := tqdm.Meter(b.desc, b.n, b.total, now.Sub(b.start).Seconds(), items, p.columns())
	n := utf8.RuneCountInString(line)
	pad := ""
	if p.open && p.lastLen > n {
		pad = strings.Repeat(" ", p.lastLen-n)
	}
	p.lastLen, b.width = n, n
	console.mu.Lock()
	defer console.mu.Unlock()
	p.open = true
	_, err := io.WriteString(p.cfg.Writer, "\r"+line+pad)
	return err
}

// due reports whether b may be redrawn after a batch.
func (p *ProgressBar) due(b *barLine) bool {
	return b.total > 0 && b.n >= b.total || p.now().Sub(b.drawn) >= p.cfg.RefreshInterval
}

// endLine ends an open bar line.
func (p *ProgressBar) endLine() error {
	console.mu.Lock()
	defer console.mu.Unlock()
	return p.endLineLocked()
}

func (p *ProgressBar) endLineLocked() error {
	if !p.open {
		return nil
	}
	p.open, p.below, p.lastLen = false, false, 0
	_, err := io.WriteString(p.cfg.Writer, "\n")
	return err
}

// clearLine blanks the current line.
func (p *ProgressBar) clearLine() error {
	console.mu.Lock()
	defer console.mu.Unlock()
	p.open, p.lastLen = false, 0
	_, err := io.WriteString(p.cfg.Writer, "\r\x1b[2K")
	return err
}

// OnTrainEpochStart resets the training bar to the epoch.
func (p *ProgressBar) OnTrainEpochStart(t *Trainer) error {
	p.desc = epochPlainName(t)
	if !p.terminal {
		return nil
	}
	if p.train == nil {
		p.train = &barLine{postfix: true}
	}
	b := p.train
	b.desc, b.n, b.total, b.start = fmt.Sprintf("Epoch %d", t.CurrentEpoch()), 0, t.NumTrainingBatches(), p.now()
	return p.draw(t, b)
}

// epochPlainName is "epoch i", i counted from 0 as Lightning's default
// progress bar (TQDMProgressBar's "Epoch 0") and the terminal bar count it:
// a one-epoch run prints "epoch 0".
func epochPlainName(t *Trainer) string {
	return fmt.Sprintf("epoch %d", t.CurrentEpoch())
}

// plainMetrics renders the progress bar's name=value pairs in logging order.
func plainMetrics(t *Trainer) string {
	m := t.ProgressBarMetrics()
	var b strings.Builder
	for _, k := range t.progressBarKeys() {
		fmt.Fprintf(&b, " %s=%.4g", k, m[k])
	}
	return b.String()
}

// OnTrainBatchEnd advances the training bar, or writes a plain line every
// Every steps.
func (p *ProgressBar) OnTrainBatchEnd(t *Trainer, _ *StepOutput, _ *data.Batch, batchIdx int) error {
	if !p.terminal {
		step := t.GlobalStep()
		if p.cfg.Every > 0 && step > 0 && step%int64(p.cfg.Every) == 0 && step != p.lastLine {
			p.lastLine = step
			batches := fmt.Sprint(batchIdx + 1)
			if n := t.NumTrainingBatches(); n > 0 {
				batches += fmt.Sprintf("/%d", n)
			}
			_, err := fmt.Fprintf(p.cfg.Writer, "%s batch %s step %d%s\n", p.desc, batches, step, plainMetrics(t))
			return err
		}
		return nil
	}
	if p.train == nil {
		return nil
	}
	p.train.n = batchIdx + 1
	if !p.due(p.train) {
		return nil
	}
	return p.draw(t, p.train)
}

// OnTrainEpochEnd draws the epoch's bar with the epoch's values, or writes
// the epoch line.
func (p *ProgressBar) OnTrainEpochEnd(t *Trainer) error {
	if !p.terminal {
		_, err := fmt.Fprintf(p.cfg.Writer, "%s step %d%s\n", p.desc, t.GlobalStep(), plainMetrics(t))
		return err
	}
	if p.train == nil {
		return nil
	}
	return p.draw(t, p.train)
}

// OnTrainEnd leaves the training bar on screen: in its final state, drawn
// at the epoch's end, or redrawn when still on its line.
func (p *ProgressBar) OnTrainEnd(t *Trainer) error {
	if p.train == nil {
		return nil
	}
	var err error
	if p.open {
		err = p.draw(t, p.train)
	}
	p.train = nil
	if e := p.endLine(); err == nil {
		err = e
	}
	return err
}

// evalName is Lightning's description of an evaluation or prediction bar.
func evalName(t *Trainer, kind string) string {
	if t.State().Stage == RunningSanityCheck {
		return "Sanity Checking"
	}
	return kind
}

// startEval opens the bar of an evaluation or prediction run, below the
// training bar inside Fit.
func (p *ProgressBar) startEval(t *Trainer, kind string) error {
	if !p.terminal {
		return nil
	}
	name := evalName(t, kind)
	p.eval = &barLine{desc: name, kind: name, loader: -1, start: p.now()}
	if p.train != nil {
		p.train.drawn = time.Time{}
		if err := p.draw(t, p.train); err != nil {
			return err
		}
		if err := p.endLine(); err != nil {
			return err
		}
		p.below = true
	}
	return p.draw(t, p.eval)
}

// evalBatch advances the evaluation bar; a new loader restarts it.
func (p *ProgressBar) evalBatch(t *Trainer, batchIdx, loader int) error {
	b := p.eval
	if b == nil {
		return nil
	}
	if loader != b.loader {
		b.loader, b.start = loader, p.now()
		b.desc = fmt.Sprintf("%s DataLoader %d", b.kind, loader)
		b.total = -1
		if n := t.NumEvalBatches(); loader < len(n) {
			b.total = n[loader]
			if s := t.NumSanityValSteps(); t.State().Stage == RunningSanityCheck && s >= 0 && (b.total < 0 || s < b.total) {
				b.total = s
			}
		}
	}
	b.n = batchIdx + 1
	if !p.due(b) {
		return nil
	}
	return p.draw(t, b)
}

// endEval clears the bar of a validation inside Fit (going back up to the
// training bar when it was drawn below it), or leaves the bar of a
// Validate, Test or Predict run on its line (Lightning's leave).
func (p *ProgressBar) endEval(t *Trainer) error {
	b := p.eval
	if b == nil {
		return nil
	}
	p.eval = nil
	if t.State().Fn != StageFit {
		if err := p.draw(t, b); err != nil {
			return err
		}
		return p.endLine()
	}
	below := p.below
	if err := p.clearLine(); err != nil || p.train == nil {
		return err
	}
	if below {
		// Back to the training bar's line, which the redraw overwrites.
		if _, err := io.WriteString(p.cfg.Writer, "\x1b[1A"); err != nil {
			return err
		}
		// That line holds the training bar's last drawing.
		p.open, p.below, p.lastLen = true, false, p.train.width
	}
	return p.draw(t, p.train)
}

// OnValidationStart opens the validation bar.
func (p *ProgressBar) OnValidationStart(t *Trainer) error {
	return p.startEval(t, "Validation")
}

// OnValidationBatchEnd advances the validation bar.
func (p *ProgressBar) OnValidationBatchEnd(t *Trainer, _ *StepOutput, _ *data.Batch, batchIdx, loader int) error {
	return p.evalBatch(t, batchIdx, loader)
}

// OnValidationEnd clears the validation bar.
func (p *ProgressBar) OnValidationEnd(t *Trainer) error { return p.endEval(t) }

// OnTestStart opens the test bar.
func (p *ProgressBar) OnTestStart(t *Trainer) error { return p.startEval(t, "Testing") }

// OnTestBatchEnd advances the test bar.
func (p *ProgressBar) OnTestBatchEnd(t *Trainer, _ *StepOutput, _ *data.Batch, batchIdx, loader int) error {
	return p.evalBatch(t, batchIdx, loader)
}

// OnTestEnd leaves the test bar.
func (p *ProgressBar) OnTestEnd(t *Trainer) error { return p.endEval(t) }

// OnPredictStart opens the prediction bar.
func (p *ProgressBar) OnPredictStart(t *Trainer) error { return p.startEval(t, "Predicting") }

// OnPredictBatchEnd advances the prediction bar.
func (p *ProgressBar) OnPredictBatchEnd(t *Trainer, _ *StepOutput, _ *data.Batch, batchIdx, loader int) error {
	return p.evalBatch(t, batchIdx, loader)
}

// OnPredictEnd leaves the prediction bar.
func (p *ProgressBar) OnPredictEnd(t *Trainer) error { return p.endEval(t) }

// OnException ends the line of an open bar, so the error starts on its own.
func (p *ProgressBar) OnException(t *Trainer, err error) {
	p.endLine()
	p.train, p.eval = nil, nil
}

// Interface guards.
var (
	_ ProgressReporter     = (*ProgressBar)(nil)
	_ Setup                = (*ProgressBar)(nil)
	_ Teardown             = (*ProgressBar)(nil)
	_ OnTrainEpochStart    = (*ProgressBar)(nil)
	_ OnTrainBatchEnd      = (*ProgressBar)(nil)
	_ OnTrainEpochEnd      = (*ProgressBar)(nil)
	_ OnTrainEnd           = (*ProgressBar)(nil)
	_ OnValidationStart    = (*ProgressBar)(nil)
	_ OnValidationBatchEnd = (*ProgressBar)(nil)
	_ OnValidationEnd      = (*ProgressBar)(nil)
	_ OnTestStart          = (*ProgressBar)(nil)
	_ OnTestBatchEnd       = (*ProgressBar)(nil)
	_ OnTestEnd            = (*ProgressBar)(nil)
	_ OnPredictStart       = (*ProgressBar)(nil)
	_ OnPredictBatchEnd    = (*ProgressBar)(nil)
	_ OnPredictEnd         = (*ProgressBar)(nil)
	_ OnException          = (*ProgressBar)(nil)
)
