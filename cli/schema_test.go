package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
	"gopkg.in/yaml.v3"
)

// TestSnakeCase checks the keys of Go names, acronyms included.
func TestSnakeCase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"MaxEpochs", "max_epochs"},
		{"CheckValEveryNEpoch", "check_val_every_n_epoch"},
		{"TruncatedBPTTSteps", "truncated_bptt_steps"},
		{"LR", "lr"},
		{"SaveTopK", "save_top_k"},
		{"Layer2Size", "layer2_size"},
		{"TerminateOnNaN", "terminate_on_nan"},
		{"SWALRs", "swa_lrs"},
		{"Dirpath", "dirpath"},
		{"DeviceIDs", "device_ids"},
		{"URLsSeen", "urls_seen"},
		{"NumIDs", "num_ids"},
		{"Steps", "steps"},
		{"BPTTSteps", "bptt_steps"},
	}
	for _, tc := range tests {
		if got := snakeCase(tc.in); got != tc.want {
			t.Errorf("snakeCase(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestNearest checks suggestions: same last segment first, then edit
// distance ignoring case, dashes and underscores.
func TestNearest(t *testing.T) {
	keys := []string{"trainer.max_epochs", "trainer.max_steps", "trainer.min_epochs", "model.lr"}
	tests := []struct{ in, want string }{
		{"trainer.max_epoch", "trainer.max_epochs"},
		{"max_epochs", "trainer.max_epochs"},
		{"trainer.MaxSteps", "trainer.max_steps"},
		{"model.l", "model.lr"},
		{"trainer.min-epochs", "trainer.min_epochs"},
	}
	for _, tc := range tests {
		if got := nearest(tc.in, keys); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEveryConfigFieldIsAKey checks that every volt.Config field but the
// Go-only ones (writers, *slog.Logger) has a trainer key, a flag and a line
// in print-config: a field added to volt.Config shows up by itself, or
// fails here when the CLI cannot hold its type.
func TestEveryConfigFieldIsAKey(t *testing.T) {
	l, err := fixture{args: []string{"print-config"}}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	doc := l.inv.schema.document()
	var help bytes.Buffer
	fs := l.inv.schema.flagSet("prog fit", &commandLine{}, &help)
	cfg := reflect.TypeFor[volt.Config]()
	for i := range cfg.NumField() {
		f := cfg.Field(i)
		if slices.Contains(configOnlyFields, f.Name) {
			continue
		}
		key := "trainer." + snakeCase(f.Name)
		if _, ok := l.inv.schema.byKey[key]; !ok {
			t.Errorf("volt.Config.%s: no key %s", f.Name, key)
		}
		if fs.Lookup(key) == nil {
			t.Errorf("volt.Config.%s: no flag --%s", f.Name, key)
		}
		if findNode(doc, key) == nil {
			t.Errorf("volt.Config.%s: print-config has no %s", f.Name, key)
		}
	}
}

// findNode returns the node at a dotted key (nil when absent).
func findNode(n *yaml.Node, key string) *yaml.Node {
	for _, part := range strings.Split(key, ".") {
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// requiredOptions are the options some callbacks cannot do without.
var requiredOptions = map[string]string{
	"early_stopping":                  "{monitor: val_loss}",
	"on_exception_checkpoint":         "{dirpath: ckpts}",
	"stochastic_weight_averaging":     "{swa_lrs: [0.1]}",
	"gradient_accumulation_scheduler": "{scheduling: {0: 2}}",
}

// TestEveryComponentRoundTrips checks that each built-in callback and
// logger, named alone, is built, printed with all its options and read back
// to the same options.
func TestEveryComponentRoundTrips(t *testing.T) {
	reg := builtinRegistry()
	for _, kind := range []struct {
		key   string
		table map[string]*entry
	}{{"callbacks", reg.callbacks}, {"loggers", reg.loggers}} {
		for _, name := range names(kind.table) {
			t.Run(name, func(t *testing.T) {
				item := name
				if options, ok := requiredOptions[name]; ok {
					item = "{" + name + ": " + options + "}"
				}
				args := []string{"print-config", "--trainer." + kind.key + "=[" + item + "]"}
				first, err := fixture{args: args}.load(t)
				if err != nil {
					t.Fatal(err)
				}
				text := first.printed(t)
				second, err := fixture{args: []string{"fit"}, opts: []Option{WithDefaultConfig("printed", []byte(text))}}.loadHere(t)
				if err != nil {
					t.Fatalf("%v\n%s", err, text)
				}
				if a, b := snapshot(first), snapshot(second); !reflect.DeepEqual(a, b) {
					t.Errorf("differ:\n%+v\n%+v", a, b)
				}
			})
		}
	}
}

// myCallbackConfig is the options of a program's own callback.
type myCallbackConfig struct {
	Every int `volt:"every_n" help:"how often"`
}

// myCallback is a program's own callback.
type myCallback struct{ cfg myCallbackConfig }

// TestWithCallback checks that a program's own callback is named like the
// built-in ones, its options keyed by their tags.
func TestWithCallback(t *testing.T) {
	build := func(c myCallbackConfig) (*myCallback, error) { return &myCallback{c}, nil }
	l, err := fixture{args: []string{"fit", "--trainer.callbacks=[{mine: {every_n: 3}}]"},
		opts: []Option{WithCallback("mine", build)}}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	cbs, errs := buildCallbacks(l.inv.rc.callbacks)
	if len(errs) > 0 || len(cbs) != 1 || cbs[0].(*myCallback).cfg.Every != 3 {
		t.Errorf("got %v %v, want one myCallback with Every 3", cbs, errs)
	}
	if _, err := (fixture{args: []string{"fit", "--trainer.callbacks=[mine]"}}).loadHere(t); err == nil {
		t.Error("another run without WithCallback knows mine; registrations leak between runs")
	}
}

// TestHelp checks that fit --help lists every key with its default.
func TestHelp(t *testing.T) {
	var stderr bytes.Buffer
	l, err := fixture{args: []string{"fit", "--help"}, opts: []Option{WithOutput(&bytes.Buffer{}, &stderr)}}.load(t)
	if err != nil || l.inv != nil {
		t.Fatalf("--help: %v, %v; want no error and no run", l.inv, err)
	}
	for _, want := range []string{"--trainer.max_epochs int", "--model.lr float (default: 0.05)", "--data.batch_size int (default: 16)", "      training batch size\n", "--ckpt_path string", "--config stringArray"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestDocExample checks that the config shown in the package documentation
// loads.
func TestDocExample(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "//\tseed_everything:")
	end := strings.Index(text, "//\tckpt_path:")
	end += strings.Index(text[end:], "\n")
	var example strings.Builder
	for _, line := range strings.Split(text[start:end], "\n") {
		example.WriteString(strings.TrimPrefix(line, "//\t") + "\n")
	}
	l, err := fixture{args: []string{"fit"}, opts: []Option{WithDefaultConfig("doc.go", []byte(example.String()))}}.loadHere(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, example.String())
	}
	if got := l.callbackNames(); got != "early_stopping,model_checkpoint,timer" {
		t.Errorf("callbacks %q", got)
	}
}

// TestModuleValueIsAnError checks that a module returned by value, whose
// fields no config could set, is an error saying to return a pointer.
func TestModuleValueIsAnError(t *testing.T) {
	err := Run(t.Context(), func() valueModule { return valueModule{} }, testutil.NewBoringDataModule,
		WithArgs("print-config"), WithOutput(io.Discard, io.Discard))
	want := "cli: the model is a cli.valueModule value, whose fields a config cannot set; return a *cli.valueModule"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// valueModule is a module used by value.
type valueModule struct{ LR float64 }

// TrainingStep implements volt.Module.
func (valueModule) TrainingStep(*volt.Step, volt.Batch) *graph.Node { return nil }

// TestWithLogger checks that a program's own logger is named like the
// built-in ones, its options keyed by their tags.
func TestWithLogger(t *testing.T) {
	build := func(c myCallbackConfig) (*logger.JSONLLogger, error) {
		return logger.NewJSONL(logger.JSONLConfig{SaveDir: t.TempDir(), Name: fmt.Sprint("every_", c.Every)})
	}
	l, err := fixture{args: []string{"fit", "--trainer.loggers=[{mine: {every_n: 3}}]"},
		opts: []Option{WithLogger("mine", build)}}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	lgs, errs := buildLoggers(l.inv.rc.loggers)
	if len(errs) > 0 || len(lgs) != 1 || !strings.Contains(lgs[0].(*logger.JSONLLogger).LogDir(), "every_3") {
		t.Errorf("got %v %v, want one JSONL logger built with Every 3", lgs, errs)
	}
}

// TestWithProgramName checks that the name reaches what the program prints
// (print-config's "run it again with" line).
func TestWithProgramName(t *testing.T) {
	var stdout bytes.Buffer
	err := Run(t.Context(), func() *testutil.Boring { return &testutil.Boring{} }, testutil.NewBoringDataModule,
		WithArgs("print-config"), WithProgramName("trainme"), WithOutput(&stdout, io.Discard), WithEnviron(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "run it again with: trainme fit --config") {
		t.Errorf("print-config does not name the program:\n%s", stdout.String())
	}
}
