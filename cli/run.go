package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"

	"github.com/voltml/volt"
	"github.com/voltml/volt/logger"
)

// Subcommands.
const (
	cmdFit         = "fit"
	cmdValidate    = "validate"
	cmdTest        = "test"
	cmdPredict     = "predict"
	cmdPrintConfig = "print-config"
)

var subcommands = []string{cmdFit, cmdValidate, cmdTest, cmdPredict, cmdExport, cmdServe, cmdPrintConfig}

// ErrUsage is matched (errors.Is) by the errors of a bad command line or
// config: Main exits with status 2 for them.
var ErrUsage = errors.New("bad command line or config")

// usageError marks err as a usage error.
type usageError struct{ err error }

// Error returns the message of the wrapped error.
func (e usageError) Error() string { return e.err.Error() }

// Unwrap returns the wrapped error and ErrUsage.
func (e usageError) Unwrap() []error { return []error{e.err, ErrUsage} }

// Run reads a subcommand and the configuration from the command line, the
// config files and the environment, and runs it: fit, validate, test or
// predict the module that newModule returns on the data module that
// newDataModule returns, export it as ONNX, serve it over HTTP, or
// print-config. See the
// package documentation.
func Run[M volt.Module, D volt.DataModule](ctx context.Context, newModule func() M, newDataModule func() D, opts ...Option) error {
	st := newSettings(opts)
	if len(st.args) == 0 || st.args[0] == "-h" || st.args[0] == "--help" || st.args[0] == "help" {
		usage(st)
		if len(st.args) == 0 {
			return usageError{errors.New("no subcommand")}
		}
		return nil
	}
	module, dataModule := newModule(), newDataModule()
	inv, err := load(st, module, dataModule)
	if err != nil || inv == nil {
		return err
	}
	switch inv.cmd {
	case cmdPrintConfig:
		return inv.schema.writeConfig(st.stdout, st.program)
	case cmdExport:
		return runExport(inv, st, module)
	case cmdServe:
		return runServe(ctx, inv, st, module)
	}
	return inv.schema.run(ctx, inv.cmd, inv.rc, st, module, dataModule)
}

// newSettings applies opts to the defaults.
func newSettings(opts []Option) *settings {
	st := &settings{args: os.Args[1:], program: filepath.Base(os.Args[0]), stdout: os.Stdout, stderr: os.Stderr,
		envPrefix: "VOLT", environ: os.Environ(), reg: builtinRegistry().clone()}
	for _, o := range opts {
		o(st)
	}
	return st
}

// invocation is a subcommand with its resolved config.
type invocation struct {
	cmd    string
	rc     *runConfig
	schema *schema
	export *exportRequest // export's checked flags
	serve  *serveRequest  // serve's checked flags
}

// load reads the subcommand and resolves its config onto module and
// dataModule; nil without an error when only help was asked for.
func load(st *settings, module volt.Module, dataModule volt.DataModule) (*invocation, error) {
	cmd := st.args[0]
	if !slices.Contains(subcommands, cmd) {
		return nil, usageError{&Error{Problem: fmt.Sprintf("unknown subcommand %q; valid: %v", cmd, subcommands), Suggestion: nearest(cmd, subcommands)}}
	}
	rc := &runConfig{model: reflect.ValueOf(module), data: reflect.ValueOf(dataModule)}
	s, err := newSchema(rc, st.reg)
	if err != nil {
		return nil, err
	}
	cl, fs, err := s.parseFlags(cmd, st.program+" "+cmd, st.args[1:], st.stderr)
	if err != nil {
		return nil, usageError{err}
	}
	if cl.help {
		// The defaults shown are the program's: its default configs
		// applied (a broken one is reported when the command runs), then
		// the values in effect (max_epochs 0 shows 1000).
		for _, d := range st.defaults {
			_ = s.loadYAML(d.name, d.text)
		}
		rc.trainer = effectiveTrainer(rc.trainer)
		switch cmd {
		case cmdExport:
			exportUsage(st.stderr, st.program)
		case cmdServe:
			serveUsage(st.stderr, st.program)
		default:
			fmt.Fprintf(st.stderr, "Usage: %s %s [--config FILE]... [--KEY=VALUE]...\n\n", st.program, cmd)
		}
		writeUsage(st.stderr, fs, usageWidth())
		return nil, nil
	}
	err = s.resolve(rc, st, cl)
	if cl.printConfig {
		if err != nil {
			return nil, usageError{err}
		}
		return &invocation{cmd: cmdPrintConfig, rc: rc, schema: s}, nil
	}
	inv := &invocation{cmd: cmd, rc: rc, schema: s}
	if cl.export != nil || cl.serve != nil {
		// The flags, the config and the checkpoint are checked together,
		// so that one run reports every problem.
		var flagErr error
		if cl.export != nil {
			inv.export, flagErr = cl.export.request()
		} else {
			inv.serve, flagErr = cl.serve.request()
		}
		errs := []error{flagErr, err}
		if err == nil || rc.ckptPath != "" {
			errs = append(errs, checkCheckpoint(rc.ckptPath, st.program, cmd))
		}
		err = errors.Join(errs...)
	}
	if err != nil {
		return nil, usageError{err}
	}
	return inv, nil
}

// resolve applies, lowest first: the program's default configs, the
// environment, the --config files in order, the flags in order; then checks
// the trainer settings and the callbacks' and loggers' options.
func (s *schema) resolve(rc *runConfig, st *settings, cl *commandLine) error {
	var errs []error
	for _, d := range st.defaults {
		errs = append(errs, s.loadYAML(d.name, d.text))
	}
	if st.envPrefix != "" {
		settings, err := s.envSettings(st.envPrefix, st.environ)
		errs = append(errs, err, s.apply(settings))
	}
	for _, path := range cl.configs {
		errs = append(errs, s.loadFile(path))
	}
	errs = append(errs, s.apply(cl.settings))
	// The values read are checked even when others could not be read, so
	// that one run reports every problem.
	errs = append(errs, s.checkTrainer(rc)...)
	cbs, cbErrs := buildCallbacks(rc.callbacks)
	lgs, lgErrs := buildLoggers(rc.loggers)
	errs = append(append(errs, cbErrs...), lgErrs...)
	if len(cbErrs) == 0 {
		takeEffective(rc.callbacks, cbs)
	}
	if len(lgErrs) == 0 {
		takeEffective(rc.loggers, lgs)
	}
	for _, m := range []struct {
		key string
		v   reflect.Value
	}{{keyModel, rc.model}, {keyData, rc.data}} {
		if !m.v.IsValid() {
			continue
		}
		if v, ok := m.v.Interface().(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				errs = append(errs, &Error{Key: m.key, Problem: err.Error()})
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	rc.trainer = effectiveTrainer(rc.trainer)
	return nil
}

// run builds the trainer, saves the config in its log directory and runs cmd.
func (s *schema) run(ctx context.Context, cmd string, rc *runConfig, st *settings, m volt.Module, dm volt.DataModule) error {
	volt.SeedEverything(rc.seed)
	cfg := rc.trainer
	var errs []error
	cfg.Callbacks, errs = buildCallbacks(rc.callbacks)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	cfg.Loggers, errs = buildLoggers(rc.loggers)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	var saver *configSaver
	if hasLogDir(cfg.Loggers) || (len(cfg.Loggers) == 0 && !cfg.DisableLoggers) {
		// Saved once the run has settled its log directory (a new
		// version, or the resumed run's).
		saver = &configSaver{s: s, program: st.program}
		cfg.Callbacks = append(cfg.Callbacks, saver)
	}
	t, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	var opts []volt.RunOption
	if rc.ckptPath != "" {
		opts = append(opts, volt.FromCheckpoint(rc.ckptPath))
	}
	switch cmd {
	case cmdFit:
		err := t.Fit(ctx, m, dm, opts...)
		if ckpt := t.LastCheckpoint(); ckpt != "" {
			fmt.Fprintf(st.stderr, "%s: last checkpoint %s (resume or evaluate it with --ckpt-path)\n", st.program, ckpt)
		}
		if saver != nil && saver.path != "" {
			fmt.Fprintf(st.stderr, "%s: config saved as %s (run it again with --config)\n", st.program, saver.path)
		}
		return err
	case cmdValidate, cmdTest:
		run := t.Validate
		if cmd == cmdTest {
			run = t.Test
		}
		results, err := run(ctx, m, dm, opts...)
		if err != nil {
			return err
		}
		printResults(st.stdout, results)
		return nil
	case cmdPredict:
		preds, err := t.Predict(ctx, m, dm, opts...)
		if err != nil {
			return err
		}
		n := 0
		for _, loader := range preds {
			n += len(loader)
		}
		hint := ""
		if !slices.ContainsFunc(rc.callbacks, func(c component) bool { return c.entry.name == "prediction_writer" }) {
			hint = " (not saved: add a prediction_writer callback to write them)"
		}
		fmt.Fprintf(st.stderr, "%s: predicted %d batches%s\n", st.program, n, hint)
		return nil
	}
	return fmt.Errorf("cli: unknown subcommand %q", cmd)
}

// configSaver is the callback that saves the resolved config in the log
// directory when the run starts (Setup), once the trainer has settled that
// directory: a new version_N claimed for this run, or the directory of the
// run a resumed Fit continues.
type configSaver struct {
	s       *schema
	program string
	path    string // the saved file, once saved
}

// Setup saves the config on the first run.
func (c *configSaver) Setup(t *volt.Trainer, _ volt.Stage) error {
	if c.path != "" || !hasLogDir(t.Loggers()) || !t.IsGlobalZero() {
		return nil
	}
	for _, l := range t.Loggers() {
		if d, ok := l.(logger.DirClaimer); ok {
			if err := d.ClaimDir(); err != nil {
				return err
			}
		}
	}
	path, err := c.s.saveConfig(t.LogDir(), c.program)
	c.path = path
	return err
}

// hasLogDir reports whether a logger writes into a directory (where
// config.yaml goes).
func hasLogDir(loggers []logger.Logger) bool {
	for _, l := range loggers {
		if _, ok := l.(logger.Direr); ok {
			return true
		}
	}
	return false
}

// printResults writes one "name=value" line per metric, loader by loader,
// names sorted, values in full precision.
func printResults(w io.Writer, results []map[string]float64) {
	for _, r := range results {
		for _, k := range slices.Sorted(maps.Keys(r)) {
			fmt.Fprintf(w, "%s=%s\n", k, strconv.FormatFloat(r[k], 'g', -1, 64))
		}
	}
}

// usage prints the subcommands.
func usage(st *settings) {
	fmt.Fprintf(st.stderr, `Usage: %[1]s SUBCOMMAND [--config FILE]... [--KEY=VALUE]...

Subcommands:
  fit           train the model (--ckpt-path resumes from a checkpoint)
  validate      run the validation loop
  test          run the test loop
  predict       run the prediction loop
  export        write the predict step as an ONNX model
                (--onnx model.onnx --input-shape 784 FILE.ckpt)
  serve         serve the predict step over HTTP until SIGINT/SIGTERM
                (--input-shape 784 --addr 127.0.0.1:8080 FILE.ckpt)
  print-config  print the resolved config (feed it back with --config)

Values come from, lowest first: the program's defaults, environment
variables (%[2]s_TRAINER_MAX_EPOCHS for trainer.max_epochs), the --config
files in order, the flags. "%[1]s fit --help" lists every key.
`, st.program, st.envPrefix)
}

// Main runs Run with os.Args and exits: status 0 on success, 2 for a bad
// command line or config, volt.ExitCode(err) otherwise (99 for a requeue,
// 128+signal after a handled signal).
func Main[M volt.Module, D volt.DataModule](newModule func() M, newDataModule func() D, opts ...Option) {
	err := Run(context.Background(), newModule, newDataModule, opts...)
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
	if errors.Is(err, ErrUsage) {
		os.Exit(2)
	}
	os.Exit(volt.ExitCode(err))
}
