package cli

import (
	"io"

	"github.com/voltml/volt"
	"github.com/voltml/volt/logger"
)

// Option changes how Run reads its configuration.
type Option func(*settings)

// settings are the options of one Run.
type settings struct {
	args      []string
	program   string
	stdout    io.Writer
	stderr    io.Writer
	envPrefix string
	environ   []string
	defaults  []defaultConfig
	reg       *registry
}

// defaultConfig is a YAML document applied before everything else.
type defaultConfig struct {
	name string
	text []byte
}

// WithArgs sets the command line (without the program name); the default
// is os.Args[1:].
func WithArgs(args ...string) Option { return func(s *settings) { s.args = args } }

// WithProgramName sets the name shown in usage and messages; the default is
// the base name of os.Args[0].
func WithProgramName(name string) Option { return func(s *settings) { s.program = name } }

// WithOutput sets where results (stdout) and usage and messages (stderr)
// go; the defaults are os.Stdout and os.Stderr.
func WithOutput(stdout, stderr io.Writer) Option {
	return func(s *settings) { s.stdout, s.stderr = stdout, stderr }
}

// WithEnvPrefix sets the prefix of the environment variables that give
// defaults: PREFIX_TRAINER_MAX_EPOCHS for trainer.max_epochs. The default is
// "VOLT"; "" turns the environment off.
func WithEnvPrefix(prefix string) Option { return func(s *settings) { s.envPrefix = prefix } }

// WithEnviron replaces os.Environ(): the environment, as "KEY=value"
// strings.
func WithEnviron(env []string) Option { return func(s *settings) { s.environ = env } }

// WithDefaultConfig applies a YAML config before the environment, the
// files and the flags: the program's own defaults (e.g. an embedded file).
// name is used in messages.
func WithDefaultConfig(name string, yamlText []byte) Option {
	return func(s *settings) { s.defaults = append(s.defaults, defaultConfig{name, yamlText}) }
}

// WithCallback lets configs name a callback of the program's own:
//
//	cli.WithCallback("my_callback", NewMyCallback) // func(MyCallbackConfig) (*MyCallback, error)
//
// The exported fields of C are its options, keyed like the module's fields.
func WithCallback[C any, T volt.Callback](name string, build func(C) (T, error)) Option {
	e := newEntry(name, build)
	return func(s *settings) { s.reg.callbacks[name] = e }
}

// WithLogger lets configs name a logger of the program's own, as
// WithCallback does for callbacks.
func WithLogger[C any, T logger.Logger](name string, build func(C) (T, error)) Option {
	e := newEntry(name, build)
	return func(s *settings) { s.reg.loggers[name] = e }
}
