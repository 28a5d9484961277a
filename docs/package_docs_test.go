package docs

import (
	"errors"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docLink matches a doc link to an identifier of the package itself,
// [Name] or [Name.Member] (links to other packages start with a lower-case
// package name and are left out).
var docLink = regexp.MustCompile(`\[([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)?)\]`)

// TestPackageDocs checks the package comment of every package of the
// module: it exists and starts "Package <name>" ("Command <dir>" for a
// program); a package that others import (not internal, not a program)
// names where to start with a doc link to one of its exported identifiers;
// and every such link resolves.
func TestPackageDocs(t *testing.T) {
	dirs := packageDirsOfModule(t)
	if len(dirs) < 20 {
		t.Fatalf("found %d packages under the module root; the walk no longer finds them", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(importPath(dir), func(t *testing.T) {
			p := parsePackage(t, dir)
			text := strings.TrimSpace(p.Doc)
			want := "Package " + p.Name + " "
			if p.Name == "main" {
				want = "Command " + path.Base(dir) + " "
			}
			if !strings.HasPrefix(text, want) {
				t.Fatalf("package comment %q does not start with %q", firstLine(text), want)
			}
			if p.Name == "main" {
				return
			}
			names := exportedNames(t, dir)
			var links []string
			for _, m := range docLink.FindAllStringSubmatch(prose(text), -1) {
				if !names[m[1]] {
					t.Errorf("package comment links to [%s], which the package does not export", m[1])
				}
				links = append(links, m[1])
			}
			if len(links) == 0 && !slices.Contains(strings.Split(dir, "/"), "internal") && len(names) > 0 {
				t.Errorf("package comment names no exported identifier as a doc link ([Name]): say where to start")
			}
		})
	}
}

// prose returns a doc comment's text without its code blocks (indented
// lines), where brackets are not links.
func prose(text string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, " ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// packageDirsOfModule returns the directories of the module's packages,
// relative to its root ("" for the root), testdata and hidden folders
// left out.
func packageDirsOfModule(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != ".." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if _, err := build.Default.ImportDir(p, 0); err != nil {
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel("..", p)
		if err != nil {
			return err
		}
		if rel == "." {
			rel = ""
		}
		dirs = append(dirs, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// parsePackage returns the documentation of the package in dir (relative
// to the module root), from its non-test files.
func parsePackage(t *testing.T, dir string) *doc.Package {
	t.Helper()
	full := filepath.Join("..", filepath.FromSlash(dir))
	bp, err := build.Default.ImportDir(full, 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(full, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, importPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
