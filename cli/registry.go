package cli

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/logger/tensorboard"
)

// entry is a callback or logger that a config can name: its options struct
// (filled from the YAML mapping beside "name") and its constructor.
type entry struct {
	name    string
	options reflect.Type // a struct type
	build   func(options reflect.Value) (any, error)
}

// registry holds the callbacks and loggers a config can name.
type registry struct {
	callbacks map[string]*entry
	loggers   map[string]*entry
}

// newEntry wraps a constructor taking an options struct C.
func newEntry[C any, T any](name string, build func(C) (T, error)) *entry {
	t := reflect.TypeFor[C]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("cli: %q: options type %s is not a struct", name, t))
	}
	return &entry{name: name, options: t, build: func(v reflect.Value) (any, error) {
		return build(v.Interface().(C))
	}}
}

// validated turns a callback constructor that returns no error (package
// callback's: NewTrainer checks them) into one that reports the bad fields
// at once, so that a config's mistake is named before any run.
func validated[C any, T volt.CallbackValidator](build func(C) T) func(C) (T, error) {
	return func(c C) (T, error) {
		v := build(c)
		return v, v.Validate()
	}
}

// builtinRegistry lists volt's own callbacks and loggers, named as
// Lightning's classes in snake case. Options that are functions or writers
// (clocks, ItemsFn, Writer) cannot be set from a config and keep their
// defaults. Every constructor of packages callback, logger and
// logger/tensorboard that takes a …Config is here
// (TestEveryConstructorIsRegistered).
func builtinRegistry() *registry {
	r := &registry{callbacks: map[string]*entry{}, loggers: map[string]*entry{}}
	for _, e := range []*entry{
		newEntry("early_stopping", validated(callback.NewEarlyStopping)),
		newEntry("model_checkpoint", validated(callback.NewModelCheckpoint)),
		newEntry("on_exception_checkpoint", validated(callback.NewOnExceptionCheckpoint)),
		newEntry("progress_bar", validated(callback.NewProgressBar)),
		newEntry("model_summary", validated(callback.NewModelSummary)),
		newEntry("timer", validated(callback.NewTimer)),
		newEntry("learning_rate_monitor", validated(callback.NewLearningRateMonitor)),
		newEntry("gradient_accumulation_scheduler", validated(callback.NewGradientAccumulationScheduler)),
		newEntry("throughput_monitor", validated(callback.NewThroughputMonitor)),
		newEntry("device_stats_monitor", validated(callback.NewDeviceStatsMonitor)),
		newEntry("prediction_writer", validated(callback.NewPredictionWriter)),
		newEntry("backbone_finetuning", validated(callback.NewBackboneFinetuning)),
		newEntry("finetuning", validated(callback.NewFinetuning)),
		newEntry("stochastic_weight_averaging", validated(callback.NewStochasticWeightAveraging)),
		newEntry("ema_weight_averaging", validated(callback.NewEMAWeightAveraging)),
	} {
		r.callbacks[e.name] = e
	}
	for _, e := range []*entry{
		newEntry("csv", logger.NewCSV),
		newEntry("jsonl", logger.NewJSONL),
		newEntry("tensorboard", validated(tensorboard.New)),
	} {
		r.loggers[e.name] = e
	}
	return r
}

// clone returns a copy that registrations do not share with r.
func (r *registry) clone() *registry {
	return &registry{callbacks: maps.Clone(r.callbacks), loggers: maps.Clone(r.loggers)}
}

// names returns the sorted names of a table.
func names(table map[string]*entry) []string { return slices.Sorted(maps.Keys(table)) }

// component is one callback or logger named in a config: its entry and
// options, and where it was given.
type component struct {
	entry   *entry
	options reflect.Value // addressable value of entry.options
	src     source
	line    int
	// optionLines holds the line of each option key given in a file.
	optionLines map[string]int
}

// callbackSpecs are the callbacks of trainer.callbacks, in order.
type callbackSpecs []component

// loggerSpecs are the loggers of trainer.loggers, in order.
type loggerSpecs []component

// buildCallbacks constructs the callbacks, each error naming the item.
func buildCallbacks(specs callbackSpecs) ([]volt.Callback, []error) {
	var out []volt.Callback
	var errs []error
	for i, c := range specs {
		cb, err := c.entry.build(c.options)
		if err != nil {
			errs = append(errs, c.errorAt(fmt.Sprintf("trainer.callbacks[%d] (%s)", i, c.entry.name), err))
			continue
		}
		out = append(out, cb)
	}
	return out, errs
}

// buildLoggers constructs the loggers, each error naming the item.
func buildLoggers(specs loggerSpecs) ([]logger.Logger, []error) {
	var out []logger.Logger
	var errs []error
	for i, c := range specs {
		l, err := c.entry.build(c.options)
		if err != nil {
			errs = append(errs, c.errorAt(fmt.Sprintf("trainer.loggers[%d] (%s)", i, c.entry.name), err))
			continue
		}
		out = append(out, l.(logger.Logger))
	}
	return out, errs
}

// errorAt returns err (from the constructor) as an *Error on key, located
// at the option the message names (LearningRateMonitorConfig.LoggingInterval
// → logging_interval) when it was given, else at the component.
func (c component) errorAt(key string, err error) *Error {
	e := &Error{Key: key, Problem: err.Error(), Origin: c.src.origin}
	if c.src.file == "" {
		return e
	}
	e.File, e.Line = c.src.file, c.line
	for _, m := range configField.FindAllStringSubmatch(e.Problem, -1) {
		if f, ok := c.entry.options.FieldByName(m[1]); ok {
			if k, _, _, _ := fieldKey(f); c.optionLines[k] > 0 {
				line := c.optionLines[k]
				e.Line = line
				break
			}
		}
	}
	return e
}

// takeEffective replaces each component's options with the configuration
// the built callback or logger says is in effect (its Config method,
// returning the options type), so that print-config and config.yaml show
// the defaults the run takes rather than the zero values that stand for
// them. built holds the components of specs, in order.
func takeEffective[T any](specs []component, built []T) {
	for i, b := range built {
		m := reflect.ValueOf(b).MethodByName("Config")
		if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 || m.Type().Out(0) != specs[i].entry.options {
			continue
		}
		specs[i].options.Set(m.Call(nil)[0])
	}
}
