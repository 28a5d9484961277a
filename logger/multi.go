package logger

import (
	"errors"
	"slices"
)

// Multi returns a Logger that forwards every call to each of loggers in
// order, calling all of them even when some fail and joining their errors
// with errors.Join. Nil loggers are skipped. When any logger implements
// Direr, the result implements Direr too and reports the first one's LogDir.
// The result is a [Group]: the trainer claims, marks and resumes each of
// the loggers.
func Multi(loggers ...Logger) Logger {
	m := multi{}
	for _, l := range loggers {
		if l != nil {
			m.loggers = append(m.loggers, l)
		}
	}
	for _, l := range m.loggers {
		if d, ok := l.(Direr); ok {
			return multiDir{multi: m, dir: d}
		}
	}
	return m
}

// Group is implemented by loggers made of others ([Multi]): what the
// trainer does with each logger's directory and files (DirClaimer,
// Resumable) it does with each of them. A logger that wraps volt's loggers
// should be a Group (or forward those methods): otherwise their directory
// is claimed only on their first write, after callbacks may have placed
// files in it, and a resumed run starts a new version.
type Group interface {
	// Loggers returns the loggers the group forwards to, in order.
	Loggers() []Logger
}

// multi fans calls out to several loggers.
type multi struct {
	loggers []Logger
}

// Loggers returns the loggers m forwards to.
func (m multi) Loggers() []Logger { return slices.Clone(m.loggers) }

// each calls f on every logger and joins the errors.
func (m multi) each(f func(Logger) error) error {
	var errs []error
	for _, l := range m.loggers {
		errs = append(errs, f(l))
	}
	return errors.Join(errs...)
}

// LogMetrics forwards to every logger.
func (m multi) LogMetrics(metrics map[string]float64, step int64) error {
	return m.each(func(l Logger) error { return l.LogMetrics(metrics, step) })
}

// LogHyperparams forwards to every logger.
func (m multi) LogHyperparams(params map[string]any) error {
	return m.each(func(l Logger) error { return l.LogHyperparams(params) })
}

// Save forwards to every logger.
func (m multi) Save() error {
	return m.each(Logger.Save)
}

// Finalize forwards to every logger.
func (m multi) Finalize(status string) error {
	return m.each(func(l Logger) error { return l.Finalize(status) })
}

// multiDir is a multi whose LogDir is that of its first Direr.
type multiDir struct {
	multi
	dir Direr
}

// LogDir returns the first Direr's directory.
func (m multiDir) LogDir() string {
	return m.dir.LogDir()
}
