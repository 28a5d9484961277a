package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCallbackAndLoggerHasExample checks that each callback (a type of
// package callback built by New<Type>) and each logger constructor has a
// runnable example beside it, so that go doc shows working code for all.
func TestEveryCallbackAndLoggerHasExample(t *testing.T) {
	var want []string
	for _, typ := range parsePackage(t, "callback").Types {
		for _, fn := range typ.Funcs {
			if fn.Name == "New"+typ.Name {
				want = append(want, "callback.Example"+typ.Name)
			}
		}
	}
	if len(want) < 10 {
		t.Fatalf("found %d callback constructors; the search no longer finds them", len(want))
	}
	want = append(want, "logger.ExampleNewCSV", "logger.ExampleNewJSONL", "logger/tensorboard.ExampleNew")
	have := map[string]bool{}
	for _, dir := range []string{"callback", "logger", "logger/tensorboard"} {
		for name := range exampleFuncs(t, dir) {
			have[dir+"."+name] = true
		}
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("no %s: add a runnable example with // Output:", w)
		}
	}
}

// exampleFuncs returns the names of the Example functions in the test files
// of dir (relative to the module root).
func exampleFuncs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	full := filepath.Join("..", filepath.FromSlash(dir))
	entries, err := os.ReadDir(full)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(full, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range f.Decls {
			if fd, ok := obj.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") {
				names[fd.Name.Name] = true
			}
		}
	}
	return names
}
