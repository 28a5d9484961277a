package resumeprop

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/logger/tensorboard"
)

// The directories of a run under its root.
const (
	LogsName     = "logs"       // the loggers' SaveDir/Name: root/logs/version_N
	StepCkptDir  = "ckpt_steps" // the EveryNTrainSteps ModelCheckpoint
	EpochCkptDir = "ckpt_epochs"
)

// Options say how Run runs a scenario.
type Options struct {
	// Resume passes FromCheckpoint("last").
	Resume bool
	// Crash, when not nil and not a SIGKILL, fails the run there.
	Crash *Crash
	// Announce, when not nil, receives "STEP <rank> <processed>" after
	// every training batch end (a parent process kills on it), and Run
	// sleeps Pause after each line.
	Announce io.Writer
	Pause    time.Duration
}

// Run trains sc in root (the loggers and checkpoint directories are under
// it) and returns the trainer.
func Run(ctx context.Context, sc Scenario, root string, o Options) (*volt.Trainer, error) {
	volt.SeedEverything(sc.Seed)
	cfg, err := config(sc, root, o)
	if err != nil {
		return nil, err
	}
	t, err := volt.NewTrainer(cfg)
	if err != nil {
		return nil, err
	}
	var opts []volt.RunOption
	if o.Resume {
		opts = append(opts, volt.FromCheckpoint("last"))
	}
	return t, t.Fit(ctx, &module{sc: sc}, loaders(sc), opts...)
}

// config is the scenario's trainer configuration.
func config(sc Scenario, root string, o Options) (volt.Config, error) {
	dir, err := logger.VersionDir{SaveDir: root, Name: LogsName}.Pin()
	if err != nil {
		return volt.Config{}, err
	}
	csvLog, err := logger.NewCSV(logger.CSVConfig{FlushEvery: sc.CSVFlushEvery}.WithDir(dir))
	if err != nil {
		return volt.Config{}, err
	}
	tbLog := tensorboard.New(tensorboard.Config{FlushEvery: sc.TBFlushEvery}.WithDir(dir))
	err = tbLog.Validate()
	if err != nil {
		return volt.Config{}, err
	}
	cbs, err := callbacks(sc, root, o)
	if err != nil {
		return volt.Config{}, err
	}
	cfg := volt.Config{
		MaxEpochs:             sc.Epochs,
		AccumulateGradBatches: sc.Accumulate,
		GradientClipVal:       sc.ClipVal,
		LogEveryNSteps:        sc.LogEveryNSteps,
		CheckValEveryNEpoch:   sc.CheckValEveryN,
		NumSanityValSteps:     volt.Ptr(sc.NumSanitySteps),
		Loggers:               []logger.Logger{csvLog, tbLog},
		Callbacks:             cbs,
		DisableModelSummary:   true,
		Log:                   slog.New(slog.DiscardHandler),
	}
	switch sc.Clip {
	case "norm":
		cfg.GradientClipAlgorithm = volt.ClipNorm
	case "value":
		cfg.GradientClipAlgorithm = volt.ClipValue
	}
	switch v := sc.ValInterval; {
	case v == "half":
		cfg.ValCheckInterval = volt.Fraction(0.5)
	case strings.HasPrefix(v, "batches:"):
		n, err := strconv.Atoi(strings.TrimPrefix(v, "batches:"))
		if err != nil {
			return cfg, fmt.Errorf("scenario val_interval %q: %w", v, err)
		}
		cfg.ValCheckInterval = volt.Batches(n)
	case v != "":
		return cfg, fmt.Errorf("scenario val_interval %q: want \"\", \"half\" or \"batches:N\"", v)
	}
	return cfg, nil
}

// callbacks returns the scenario's callbacks, the crashing one first or
// last.
func callbacks(sc Scenario, root string, o Options) ([]volt.Callback, error) {
	var cbs []volt.Callback
	lrm := callback.NewLearningRateMonitor(callback.LearningRateMonitorConfig{LoggingInterval: "step"})
	cbs = append(cbs, lrm)
	if sc.StepCkpt > 0 {
		mc := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{
			Dirpath: filepath.Join(root, StepCkptDir), EveryNTrainSteps: sc.StepCkpt, SaveTopK: volt.Ptr(-1), SaveLast: true,
		})
		cbs = append(cbs, mc)
	}
	if sc.EpochCkpt {
		mc := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{
			Dirpath: filepath.Join(root, EpochCkptDir), Monitor: "val_loss", SaveTopK: volt.Ptr(2), SaveLast: true,
			Filename: "{epoch}-{step}-{val_loss:.4f}",
		})
		cbs = append(cbs, mc)
	}
	switch sc.Averaging {
	case "ema":
		ema := callback.NewEMAWeightAveraging(callback.EMAWeightAveragingConfig{Decay: 0.8, UpdateEvery: 1 + int(sc.Seed%2)})
		cbs = append(cbs, ema)
	case "swa":
		swa := callback.NewStochasticWeightAveraging(callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.01}, StartEpoch: 2, AnnealingEpochs: 1})
		cbs = append(cbs, swa)
	}
	if o.Announce != nil {
		cbs = append(cbs, &announcer{w: o.Announce, pause: o.Pause})
	}
	if c := o.Crash; c != nil && c.Kind != "sigkill" {
		cr := &crasher{c: *c}
		if c.First {
			cbs = append([]volt.Callback{cr}, cbs...)
		} else {
			cbs = append(cbs, cr)
		}
	}
	return cbs, nil
}
