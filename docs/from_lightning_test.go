package docs

import (
	"bufio"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// guide is the migration guide under test.
const guide = "from-lightning.md"

// godocLink matches a link to volt's godoc: the package path (empty for the
// root package) and the symbol after '#' (empty for a package link).
var godocLink = regexp.MustCompile(`\(https://pkg\.go\.dev/github\.com/voltml/volt((?:/[a-z]+)*)(?:#([A-Za-z0-9_.]+))?\)`)

// TestGuideLinksResolve checks that every godoc link of the guide names an
// exported identifier (a function, type, constant, variable, method or
// struct field) that exists in the linked package.
func TestGuideLinksResolve(t *testing.T) {
	text := readGuide(t)
	links := godocLink.FindAllStringSubmatch(text, -1)
	if len(links) < 100 {
		t.Fatalf("found %d godoc links in %s; the link pattern no longer matches the guide", len(links), guide)
	}
	pkgs := map[string]map[string]bool{}
	for _, link := range links {
		pkg, sym := strings.TrimPrefix(link[1], "/"), link[2]
		names, ok := pkgs[pkg]
		if !ok {
			names = exportedNames(t, pkg)
			pkgs[pkg] = names
		}
		if names == nil {
			t.Errorf("%s links to package %q, which does not exist", guide, importPath(pkg))
			continue
		}
		if sym != "" && !names[sym] {
			t.Errorf("%s links to %s#%s, which package %q does not export", guide, link[1], sym, importPath(pkg))
		}
	}
}

// qualified matches a volt identifier written in Go form anywhere in the
// guide, code included: the package name and the identifier (with an
// optional member, volt.Config.Seed).
var qualified = regexp.MustCompile(`\b(volt|callback|data|optim|logger|tensorboard|dist|cli|tuner|profiler)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)?)`)

// packageDirs maps the package names of qualified to their directories.
var packageDirs = map[string]string{
	"volt": "", "callback": "callback", "data": "data", "optim": "optim", "logger": "logger",
	"tensorboard": "logger/tensorboard", "dist": "dist", "cli": "cli", "tuner": "tuner", "profiler": "profiler",
}

// TestGuideNamesExist checks that every volt.X, callback.X, … written in
// the guide's text and code exists.
func TestGuideNamesExist(t *testing.T) {
	text := readGuide(t)
	pkgs := map[string]map[string]bool{}
	uses := qualified.FindAllStringSubmatch(text, -1)
	if len(uses) < 50 {
		t.Fatalf("found %d qualified names in %s; the pattern no longer matches the guide", len(uses), guide)
	}
	for _, use := range uses {
		dir := packageDirs[use[1]]
		names, ok := pkgs[dir]
		if !ok {
			names = exportedNames(t, dir)
			pkgs[dir] = names
		}
		if !names[use[2]] {
			t.Errorf("%s names %s.%s, which package %q does not export", guide, use[1], use[2], importPath(dir))
		}
	}
}

// importPath returns the import path of volt's package in dir.
func importPath(dir string) string {
	if dir == "" {
		return "github.com/voltml/volt"
	}
	return "github.com/voltml/volt/" + dir
}

// coverageLists are the lists of Lightning names in testdata that the guide
// must mention, each with the least number of names it holds (a guard
// against a list read short).
var coverageLists = []struct {
	file string
	min  int
}{
	{"lightning15_trainer_args.txt", 50},
	{"lightning_hooks.txt", 50},
	{"lightning_api.txt", 40},
}

// TestGuideCoversLightning checks that every Lightning 1.5 Trainer argument,
// every hook and the other Lightning names listed in testdata appear in the
// guide as `name`.
func TestGuideCoversLightning(t *testing.T) {
	text := readGuide(t)
	for _, c := range coverageLists {
		list := c.file
		f, err := os.Open(filepath.Join("testdata", list))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n := 0
		for sc := bufio.NewScanner(f); sc.Scan(); {
			name := strings.TrimSpace(sc.Text())
			if name == "" || strings.HasPrefix(name, "#") {
				continue
			}
			n++
			if !strings.Contains(text, "`"+name+"`") {
				t.Errorf("%s does not mention `%s` (listed in testdata/%s)", guide, name, list)
			}
		}
		if n < c.min {
			t.Errorf("testdata/%s lists %d names; expected at least %d", list, n, c.min)
		}
	}
}

func readGuide(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exportedNames returns the exported names of volt's package at pkg (a
// path below the module root, "" for the root): "Name" for top-level
// declarations, "Type.Name" for methods and struct fields. It returns nil
// when the directory holds no Go package.
func exportedNames(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	dir := filepath.Join("..", filepath.FromSlash(pkg))
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		return nil
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, importPath(pkg))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	addValues := func(vals []*doc.Value) {
		for _, v := range vals {
			for _, n := range v.Names {
				names[n] = true
			}
		}
	}
	addFuncs := func(fns []*doc.Func) {
		for _, fn := range fns {
			names[fn.Name] = true
		}
	}
	addValues(p.Consts)
	addValues(p.Vars)
	addFuncs(p.Funcs)
	for _, typ := range p.Types {
		names[typ.Name] = true
		addValues(typ.Consts)
		addValues(typ.Vars)
		addFuncs(typ.Funcs)
		for _, m := range typ.Methods {
			names[typ.Name+"."+m.Name] = true
		}
		for _, spec := range typ.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, field := range st.Fields.List {
				for _, n := range field.Names {
					if n.IsExported() {
						names[typ.Name+"."+n.Name] = true
					}
				}
			}
		}
	}
	return names
}
