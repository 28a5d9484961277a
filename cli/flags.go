package cli

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// commandLine is what the flags of one run said.
type commandLine struct {
	configs  []string  // --config files, in order
	settings []setting // --key=value flags, in order
	help     bool
	// printConfig is LightningCLI's "fit --print_config": print the
	// resolved config instead of running.
	printConfig bool
	// export holds export's own flags; nil for the other subcommands.
	export *exportFlags
	// serve holds serve's own flags; nil for the other subcommands.
	serve *serveFlags
}

// flagValue is the pflag.Value of a key: it records the text, read once
// the files are applied (flags win over files wherever they appear).
type flagValue struct {
	p   *param
	out *[]setting
}

// String returns the default, for the usage text.
func (f *flagValue) String() string {
	if f.p.target.Kind() == reflect.String {
		return f.p.target.String()
	}
	b, err := yaml.Marshal(flowStyle(encode(f.p.target)))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Set records the flag's text.
func (f *flagValue) Set(s string) error {
	*f.out = append(*f.out, setting{key: f.p.key, raw: s, origin: "flag --" + f.p.key})
	return nil
}

// Type names what the key holds, for the usage text.
func (f *flagValue) Type() string { return typeName(f.p.target.Type()) }

// typeName describes a type for the usage text.
func typeName(t reflect.Type) string {
	switch t {
	case durationType:
		return "duration"
	case batchLimitType:
		return "batches|fraction"
	case valIntervalType:
		return "batches|fraction|duration"
	case callbacksType:
		return "callbacks"
	case loggersType:
		return "loggers"
	case unevenType:
		return unevenChoices()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Slice:
		return "[" + typeName(t.Elem()) + "]"
	case reflect.Map:
		return "{" + typeName(t.Key()) + ": " + typeName(t.Elem()) + "}"
	case reflect.Struct:
		return "mapping"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Bool, reflect.String:
		return t.Kind().String()
	}
	return "int"
}

// flowStyle makes n and its children print on one line.
func flowStyle(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		flowStyle(c)
	}
	return n
}

// flagSet returns the flags of every key, --config and --help. Dashes and
// underscores are the same in flag names (--ckpt-path is --ckpt_path).
func (s *schema) flagSet(name string, cl *commandLine, usageOut io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(usageOut)
	fs.SortFlags = false
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "-", "_"))
	})
	fs.StringArrayVar(&cl.configs, "config", nil, "YAML config file; repeat to merge several, later files winning (flags win over files)")
	fs.BoolVarP(&cl.help, "help", "h", false, "show this help")
	fs.BoolVar(&cl.printConfig, "print_config", false, "print the resolved config and exit, as the print-config subcommand (LightningCLI's --print_config)")
	if cl.export != nil {
		cl.export.addFlags(fs)
	}
	if cl.serve != nil {
		cl.serve.addFlags(fs)
	}
	for _, p := range s.params {
		f := fs.VarPF(&flagValue{p: p, out: &cl.settings}, p.key, "", p.help)
		if p.target.Kind() == reflect.Bool {
			f.NoOptDefVal = "true"
		}
	}
	return fs
}

// parseFlags parses the args of subcommand cmd, naming the nearest flag
// for an unknown one. export and serve take their own flags and one
// argument, the checkpoint (as --ckpt-path).
func (s *schema) parseFlags(cmd, name string, args []string, usageOut io.Writer) (*commandLine, *pflag.FlagSet, error) {
	cl := &commandLine{}
	switch cmd {
	case cmdExport:
		cl.export = &exportFlags{}
	case cmdServe:
		cl.serve = &serveFlags{}
	}
	fs := s.flagSet(name, cl, usageOut)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		var unknown *pflag.NotExistError
		if errors.As(err, &unknown) {
			given := strings.TrimLeft(unknown.GetSpecifiedName(), "-")
			flags := []string{"config", "help", "print_config"}
			if cl.export != nil {
				flags = append(flags, exportFlagNames...)
			}
			if cl.serve != nil {
				flags = append(flags, serveFlagNames...)
			}
			for _, p := range s.params {
				flags = append(flags, p.key)
			}
			return nil, fs, &Error{Origin: "flag --" + given, Problem: "unknown flag", Suggestion: "--" + suggestKey(given, flags)}
		}
		return nil, fs, &Error{Problem: err.Error()}
	}
	switch {
	case cl.export != nil && fs.NArg() > 0:
		ckpt, err := takeCheckpoint(cmd, cl, fs.Args())
		if err != nil {
			return nil, fs, err
		}
		cl.export.ckpt = ckpt
	case cl.serve != nil && fs.NArg() > 0:
		ckpt, err := takeCheckpoint(cmd, cl, fs.Args())
		if err != nil {
			return nil, fs, err
		}
		cl.serve.ckpt = ckpt
	case fs.NArg() > 0:
		return nil, fs, &Error{Problem: fmt.Sprintf("unexpected argument %q (options are flags: --key=value)", fs.Arg(0))}
	}
	return cl, fs, nil
}
