package cli

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/testutil"
)

// fixture is one invocation: files written into a fresh working
// directory, environment variables and the command line.
type fixture struct {
	files map[string]string
	env   map[string]string
	args  []string
	opts  []Option
}

// loaded is what a fixture resolved to.
type loaded struct {
	inv   *invocation
	model *testutil.Boring
	data  *testutil.BoringDataModule
}

// load writes the files into a temporary directory, makes it the working
// directory and resolves the command line there.
func (f fixture) load(t *testing.T) (loaded, error) {
	t.Helper()
	t.Chdir(t.TempDir())
	for name, text := range f.files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f.loadHere(t)
}

// loadHere resolves the command line in the current directory.
func (f fixture) loadHere(t *testing.T) (loaded, error) {
	t.Helper()
	var environ []string
	for k, v := range f.env {
		environ = append(environ, k+"="+v)
	}
	opts := append([]Option{WithArgs(f.args...), WithOutput(io.Discard, io.Discard), WithEnviron(environ)}, f.opts...)
	l := loaded{model: &testutil.Boring{LR: 0.05}, data: testutil.NewBoringDataModule()}
	var err error
	l.inv, err = load(newSettings(opts), l.model, l.data)
	return l, err
}

// printed returns the resolved config as print-config writes it.
func (l loaded) printed(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := l.inv.schema.writeConfig(&b, "prog"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// callbackNames lists the names of the configured callbacks.
func (l loaded) callbackNames() string {
	var names []string
	for _, c := range l.inv.rc.callbacks {
		names = append(names, c.entry.name)
	}
	return strings.Join(names, ",")
}
