package hookgen

import (
	"reflect"
	"strings"
	"testing"
)

// TestParse: each hook's call is built from its parameters, by type and
// the ints by name; a host hook that returns nothing is called and nil
// returned.
func TestParse(t *testing.T) {
	src := `package volt

// Hooks of a kind.

// OnA is called at A.
type OnA interface{ OnA(t *Trainer) error }

// OnB is called at B.
type OnB interface {
	OnB(t *Trainer, out *StepOutput, b *data.Batch, batchIdx, dataloaderIdx int) error
}

// OnC is called at C.
type OnC interface{ OnC(t *Trainer, err error) }

// OnD is traced.
type OnD interface{ OnD(s *Step, optimizerIdx int, grads []Gradient) }

// notAHook is unexported.
type notAHook interface{ x() }

// Alias is no interface.
type Alias = int
`
	hooks, err := Parse("hooks.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Hook{
		{Name: "OnA", Args: []string{"t"}, Returns: true},
		{Name: "OnB", Args: []string{"t", "a.out", "a.batch", "a.batchIdx", "a.dataloaderIdx"}, Returns: true},
		{Name: "OnC", Args: []string{"t", "a.err"}},
		{Name: "OnD", Trace: true, Args: []string{"a.step", "a.optimizerIdx", "a.grads"}},
	}
	if !reflect.DeepEqual(hooks, want) {
		t.Errorf("hooks\n%+v\nwant\n%+v", hooks, want)
	}
	out, err := Render(hooks)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"hookOnA hookID = iota + 1",
		"return func(t *Trainer, _ hookArgs) error { return h.OnA(t) }",
		"return h.OnB(t, a.out, a.batch, a.batchIdx, a.dataloaderIdx)",
		"h.OnC(t, a.err)\n\t\t\treturn nil",
		"hookOnD: traced(func(h OnD, a traceArgs) { h.OnD(a.step, a.optimizerIdx, a.grads) }),",
	} {
		if !strings.Contains(string(out), line) {
			t.Errorf("generated source lacks %q:\n%s", line, out)
		}
	}
}

// TestParseRefuses: what hookgen cannot bind, or a hook without its doc,
// is an error naming the hook and saying why.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, decl, want string
	}{
		{"no doc", "type OnX interface{ OnX(t *Trainer) error }", "no doc comment"},
		{"two methods", "// OnX.\ntype OnX interface{ OnX(t *Trainer) error; Y() }", "one method"},
		{"method named otherwise", "// OnX.\ntype OnX interface{ Other(t *Trainer) error }", "named as its interface"},
		{"unknown parameter", "// OnX.\ntype OnX interface{ OnX(t *Trainer, n float64) error }", "parameter n float64"},
		{"unknown int", "// OnX.\ntype OnX interface{ OnX(t *Trainer, epoch int) error }", "parameter epoch int"},
		{"no trainer first", "// OnX.\ntype OnX interface{ OnX(b *data.Batch) error }", "first parameter is *data.Batch"},
		{"other result", "// OnX.\ntype OnX interface{ OnX(t *Trainer) bool }", "returns an error or nothing"},
		{"traced with an error", "// OnX.\ntype OnX interface{ OnX(s *Step) error }", "trace-time hook returns nothing"},
	} {
		_, err := Parse("hooks.go", []byte("package volt\n\n"+tc.decl+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "hooks.go: hook OnX") {
			t.Errorf("%s: error %v, want one naming hooks.go's OnX and saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := Parse("hooks.go", []byte("package volt\n")); err == nil {
		t.Error("a file without hooks was accepted")
	}
}
