package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// constructors returns, for the Go files of the package in dir (tests
// aside), the constructors a config can name: each exported func New…
// whose one parameter is a struct type named …Config, by that type's name.
func constructors(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || !strings.HasPrefix(fn.Name.Name, "New") || len(fn.Type.Params.List) != 1 {
				continue
			}
			if typ, ok := fn.Type.Params.List[0].Type.(*ast.Ident); ok && strings.HasSuffix(typ.Name, "Config") {
				found[typ.Name] = f.Name.Name + "." + fn.Name.Name
			}
		}
	}
	return found
}

// TestEveryConstructorIsRegistered: every callback and logger constructor
// of volt's packages (a New… taking a …Config) has an entry in
// builtinRegistry (registry.go), so that a config names it; a new callback
// or logger fails here until it is registered there.
func TestEveryConstructorIsRegistered(t *testing.T) {
	reg := builtinRegistry()
	for _, tc := range []struct {
		dir, kind string
		table     map[string]*entry
	}{
		{"../callback", "callbacks", reg.callbacks},
		{"../logger", "loggers", reg.loggers},
		{"../logger/tensorboard", "loggers", reg.loggers},
	} {
		registered := map[string]bool{}
		for _, e := range tc.table {
			registered[e.options.Name()] = true
			registered[path.Base(e.options.PkgPath())+"."+e.options.Name()] = true
		}
		found := constructors(t, tc.dir)
		if len(found) == 0 {
			t.Fatalf("%s: no constructors found", tc.dir)
		}
		pkg := path.Base(tc.dir)
		for config, constructor := range found {
			if !registered[config] && !registered[pkg+"."+config] {
				t.Errorf("%s (%s) is not in builtinRegistry's %s (cli/registry.go): add "+
					`newEntry("<Lightning's class name in snake case>", validated(%s))`, constructor, config, tc.kind, constructor)
			}
		}
	}
}
