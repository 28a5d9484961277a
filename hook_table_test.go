package volt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/hookgen"
)

// notHooks are the package's exported interfaces that are no optional
// hook: the required Module, the Config value types and CallbackValidator
// (NewTrainer's check of a callback's configuration).
var notHooks = map[string]bool{"Module": true, "BatchLimit": true, "ValInterval": true, "ModuleWrapper": true, "CallbackValidator": true}

// TestHookTableListsEveryInterface guards against the drift the table
// replaced: every exported interface of the package is a row (or named in
// notHooks), and every row is complete.
func TestHookTableListsEveryInterface(t *testing.T) {
	rows := map[string]hookID{}
	for id := range hookTable {
		spec := hookTable[id]
		if hookID(id) == hookNone {
			if spec.iface != nil {
				t.Errorf("hookNone has a row: %s", spec.iface)
			}
			continue
		}
		switch {
		case spec.iface == nil:
			t.Errorf("hook %d has no row", id)
			continue
		case spec.on == 0:
			t.Errorf("%s: no target may implement it", spec.iface)
		case (spec.when == perEvent) != (spec.bind != nil), (spec.when == traceTime) != (spec.bindTrace != nil):
			t.Errorf("%s: hook time %d with host call %v, trace call %v", spec.iface, spec.when, spec.bind != nil, spec.bindTrace != nil)
		case spec.name == "":
			t.Errorf("%s: no name", spec.iface)
		}
		if _, dup := rows[spec.iface.Name()]; dup {
			t.Errorf("%s is in the table twice", spec.iface)
		}
		rows[spec.iface.Name()] = hookID(id)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() || notHooks[ts.Name.Name] {
				return true
			}
			if _, isInterface := ts.Type.(*ast.InterfaceType); !isInterface {
				return true
			}
			if _, ok := rows[ts.Name.Name]; !ok {
				t.Errorf("%s: interface %s is not in the hook table (hook_table.go)", name, ts.Name.Name)
			}
			return true
		})
	}
}

// TestHookNames: errors name a hook by its method (one-method interfaces)
// or by its interface.
func TestHookNames(t *testing.T) {
	for _, tc := range []struct {
		id   hookID
		want string
	}{{hookOnTrainBatchEnd, "OnTrainBatchEnd"}, {hookDataSetup, "Setup"}, {hookStateful, "Stateful"}, {hookOnBeforeBackward, "OnBeforeBackward"}} {
		if got := hookTable[tc.id].name; got != tc.want {
			t.Errorf("hook %d is named %q, want %q", tc.id, got, tc.want)
		}
	}
	if reflect.TypeFor[OnTrainBatchEnd]() != hookTable[hookOnTrainBatchEnd].iface {
		t.Error("hookOnTrainBatchEnd's row has another interface")
	}
}

// TestHookTableIsCurrent: hook_table_gen.go is what internal/hookgen
// writes from hooks.go now; run "go generate ." after changing hooks.go.
func TestHookTableIsCurrent(t *testing.T) {
	src, err := os.ReadFile(hookgen.Source)
	if err != nil {
		t.Fatal(err)
	}
	want, err := hookgen.Generate(hookgen.Source, src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(hookgen.Output)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error(`hook_table_gen.go is stale: run "go generate ." in the module's root`)
	}
}
