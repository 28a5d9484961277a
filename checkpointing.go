package volt

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/internal/engine"
)

// Version is volt's version, recorded in every checkpoint.
const Version = "0.1.0"

// SaveCheckpoint writes the full training state (weights, optimizer state,
// loop progress, data position, metric accumulators, callback and data
// module state) to path atomically: a failed save leaves any previous file
// intact. With weightsOnly it writes the module's weights and hyperparameters
// only. It may be called from any hook, or between runs. In a data-parallel
// job every rank calls it at the same point: rank 0 writes the file, and
// every rank returns once it is complete.
func (t *Trainer) SaveCheckpoint(path string, weightsOnly bool) error {
	defer t.profile(actSaveCheckpoint)()
	t.sayStaleTemps(filepath.Dir(path))
	if t.ddp.on {
		return t.saveCheckpointOnRankZero(path, weightsOnly)
	}
	f, err := t.snapshot(weightsOnly)
	if err != nil {
		return fmt.Errorf("volt: SaveCheckpoint %s: %w", path, err)
	}
	if err := checkpoint.Save(path, f); err != nil {
		return fmt.Errorf("volt: SaveCheckpoint: %w", err)
	}
	t.ckpt.lastCheckpoint = path
	return nil
}

// snapshot captures the trainer's state: the module's variables (all of
// them, or the module's only when weightsOnly), the checkpoint's metadata
// and, in a full checkpoint, every part's state (stateParts).
func (t *Trainer) snapshot(weightsOnly bool) (*checkpoint.File, error) {
	if t.eng == nil {
		return nil, errors.New("nothing to save: the trainer has not run a module yet")
	}
	st := t.newStateDoc("")
	if err := t.saveMetadata(st, weightsOnly); err != nil {
		return nil, err
	}
	if weightsOnly {
		// Every row logged so far reaches the files before the checkpoint
		// is published (the loggers' part does so in a full one).
		if _, err := t.logs.markLoggers(); err != nil {
			return nil, err
		}
	} else {
		for _, p := range t.stateParts() {
			if err := p.save(st); err != nil {
				return nil, err
			}
		}
	}
	f := &checkpoint.File{VoltVersion: Version}
	for v := range t.eng.Store.IterVariables() {
		if weightsOnly && !engine.ModuleVariable(v.Path()) {
			continue
		}
		if !v.HasValue() {
			continue
		}
		val, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Path(), err)
		}
		ct, err := checkpoint.FromGoMLX(v.Path(), val)
		if err != nil {
			return nil, err
		}
		f.Tensors = append(f.Tensors, ct)
	}
	if err := st.addTensors(f); err != nil {
		return nil, err
	}
	var err error
	if f.State, err = st.encode(); err != nil {
		return nil, err
	}
	return f, nil
}

// saveMetadata adds what describes the checkpoint to st: whether it holds
// the weights only, the log directory of the run, the module's and data
// module's hyperparameters (what LoadModule sets) and the frozen variables.
func (t *Trainer) saveMetadata(st *stateDoc, weightsOnly bool) error {
	var hp, dmHP map[string]any
	if h, ok := t.module.(HParamser); ok {
		hp = maps.Clone(h.HParams())
	}
	if h, ok := t.dataModule.(HParamser); ok {
		dmHP = maps.Clone(h.HParams())
	}
	var frozen []string
	for v := range t.eng.Store.IterVariables() {
		if !v.Trainable && engine.ModuleVariable(v.Path()) {
			frozen = append(frozen, v.Path())
		}
	}
	for _, m := range []struct {
		member string
		value  any
	}{{"weights_only", weightsOnly}, {"log_dir", t.logDir()}, {"hparams", hp}, {"datamodule_hparams", dmHP}, {"frozen", frozen}} {
		if err := st.putNonEmpty(m.member, m.value); err != nil {
			return err
		}
	}
	return nil
}

// DataStateful is implemented by data modules whose state must be saved in
// checkpoints and restored on resume.
type DataStateful interface {
	State() ([]byte, error)
	LoadState(state []byte) error
}

// RunOption changes how one Fit, Validate, Test or Predict call runs.
type RunOption func(*runOptions)

type runOptions struct {
	ckptPath  string
	nonStrict bool
}

// FromCheckpoint restores the state saved at path before the run: "last" is
// the last checkpoint this trainer saved or, in a new process, the newest
// .ckpt file in this configuration's checkpoint directories (every version
// of the logger's run directory, every ModelCheckpoint's Dirpath), so that
// a restart after a crash resumes; "best" is the best one of a callback
// that tracks it (ModelCheckpoint). Fit resumes exactly where the checkpoint
// was taken; Validate, Test and Predict load the weights. Fit refuses a
// checkpoint whose trainer state lacks its progress (or holds a version of
// it this volt does not read); what it goes on without (a newer
// volt_version, unknown parts, a callback's missing state, another
// AccumulateGradBatches, which the resumed run does not take) is said once
// as a warning through Config.Log.
func FromCheckpoint(path string) RunOption { return func(o *runOptions) { o.ckptPath = path } }

// NonStrict loads a checkpoint whose variables do not match the module
// exactly: missing variables keep their initialisation and unexpected ones
// are ignored (shapes must still match).
func NonStrict() RunOption { return func(o *runOptions) { o.nonStrict = true } }

// BestModelPather is implemented by callbacks that track the best checkpoint.
type BestModelPather interface{ BestModelPath() string }

// resolveCheckpointPath turns "last" (findLastCheckpoint) and "best" into
// files.
func (t *Trainer) resolveCheckpointPath(path string) (string, error) {
	switch path {
	case "last":
		return t.findLastCheckpoint()
	case "best":
		for _, cb := range t.cfg.Callbacks {
			if b, ok := cb.(BestModelPather); ok && b.BestModelPath() != "" {
				return b.BestModelPath(), nil
			}
		}
		return "", errors.New(`FromCheckpoint("best"): no callback (ModelCheckpoint with a monitor) has a best checkpoint`)
	}
	return path, nil
}

// loadCheck remembers which variables a restore set, until the first traced
// graph is compared with them.
type loadCheck struct {
	path   string
	loaded map[string]bool
	strict bool
	// schedulerErr is a scheduler state the checkpoint lacks, reported by
	// checkLoaded once the variables match (startSchedulers).
	schedulerErr error
}

// restore loads path into the trainer: tensors into the store (now for the
// variables that exist, on creation for the others) and, for Fit, the state.
func (t *Trainer) restore(path string, opts runOptions, fn Stage) error {
	if err := t.barrierBeforeLoad(); err != nil {
		return err
	}
	path, err := t.resolveCheckpointPath(path)
	if err != nil {
		return err
	}
	f, err := checkpoint.Load(path)
	if err != nil {
		return err
	}
	st, err := t.decodeStateDoc(path, f.State)
	if err != nil {
		return err
	}
	if err := t.takeRankMetrics(path, f, st); err != nil {
		return err
	}
	var meta struct {
		WeightsOnly bool     `json:"weights_only"`
		Frozen      []string `json:"frozen"`
	}
	if err := st.decode(&meta); err != nil {
		return err
	}
	if fn == StageFit && meta.WeightsOnly {
		return fmt.Errorf("checkpoint %s holds weights only; Fit cannot resume from it (load it with Validate, Test or Predict, or start a new Fit from its weights with volt.LoadModule)", path)
	}
	if err := t.checkState(path, f.VoltVersion, st, fn); err != nil {
		return err
	}
	frozen := map[string]bool{}
	for _, p := range meta.Frozen {
		frozen[p] = true
	}
	l := &loadCheck{path: path, loaded: map[string]bool{}, strict: !opts.nonStrict}
	store := t.eng.Store
	var mismatched []string
	for _, ct := range f.Tensors {
		val, err := ct.ToGoMLX()
		if err != nil {
			return fmt.Errorf("checkpoint %s: tensor %s: %w", path, ct.Name, err)
		}
		if strings.HasPrefix(ct.Name, metricStatePrefix) {
			st.tensors[ct.Name] = val // a part's (the training metrics')
			continue
		}
		v := store.GetVariable(ct.Name)
		if v == nil {
			if v, err = store.CreateVariable(ct.Name, val); err != nil {
				return fmt.Errorf("checkpoint %s: creating %s: %w", path, ct.Name, err)
			}
		} else if !val.Shape().Equal(v.Shape()) {
			mismatched = append(mismatched, mismatch(ct.Name, val.Shape().String(), v.Shape().String()))
			continue
		} else if err := v.SetValue(val); err != nil {
			return fmt.Errorf("checkpoint %s: setting %s: %w", path, ct.Name, err)
		}
		v.SetTrainable(!frozen[ct.Name] && engine.ModuleVariable(ct.Name))
		l.loaded[ct.Name] = true
	}
	if len(mismatched) > 0 {
		return fmt.Errorf("checkpoint %s does not fit the module: %s", path, strings.Join(mismatched, "; "))
	}
	t.ckpt.loaded, t.ckpt.restoredFrom = l, l
	if fn != StageFit {
		return nil
	}
	return t.restoreState(st)
}

// restoreState gives every part its state back from st, the trainer state
// of the checkpoint a Fit resumes from.
func (t *Trainer) restoreState(st *stateDoc) error {
	for _, p := range t.stateParts() {
		if err := p.load(st); err != nil {
			return err
		}
	}
	return nil
}
