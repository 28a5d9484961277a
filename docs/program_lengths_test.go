package docs

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// twins are the example programs that have a Lightning 2.2.5 twin doing the
// same, which issue 42 keeps within maxRatio of the twin's lines and imports.
var twins = []struct{ goPath, pyPath string }{
	{"../examples/firsthour/main.go", "../tools/firsthour/lightning_firsthour.py"},
	{"../examples/vae/main.go", "../tools/vae/lightning_vae.py"},
}

// maxRatio is how much longer than its Lightning twin a Go program may be,
// in lines and in imports.
const maxRatio = 1.3

// programSize is a program's lines and imports, counted as issue 24 first
// counted them: a line counts unless it is blank or a comment only (Go's //,
// Python's # and the module docstring); an import is one imported package,
// the standard library's included (Go: a line of the import block; Python:
// an import or from statement).
type programSize struct{ lines, imports int }

// goSize counts a Go program.
func goSize(src string) programSize {
	block := regexp.MustCompile(`(?s)\nimport \((.*?)\n\)`).FindStringSubmatch(src)
	imports := 0
	if block != nil {
		imports = codeLines(block[1], "//")
	}
	return programSize{codeLines(src, "//"), imports}
}

// pySize counts a Python program, without its module docstring.
func pySize(src string) programSize {
	if strings.HasPrefix(src, `"""`) {
		src = strings.SplitN(src, `"""`, 3)[2]
	}
	return programSize{codeLines(src, "#"), len(regexp.MustCompile(`(?m)^(import|from) `).FindAllString(src, -1))}
}

// codeLines counts the lines of src that are neither blank nor a comment
// only (comment is the language's line-comment mark).
func codeLines(src, comment string) int {
	n := 0
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, comment) {
			n++
		}
	}
	return n
}

// TestProgramLengths: each example with a Lightning twin has at most 1.3×
// the twin's lines and imports, and the README states both counts as this
// test counts them, so that neither the programs nor the claim can drift.
func TestProgramLengths(t *testing.T) {
	readme := readFile(t, "../README.md")
	for _, tw := range twins {
		g, p := goSize(readFile(t, tw.goPath)), pySize(readFile(t, tw.pyPath))
		t.Logf("%s: %d lines, %d imports; %s: %d lines, %d imports", tw.goPath, g.lines, g.imports, tw.pyPath, p.lines, p.imports)
		if float64(g.lines) > maxRatio*float64(p.lines) || float64(g.imports) > maxRatio*float64(p.imports) {
			t.Errorf("%s has %d lines and %d imports, over %.1f× its Lightning twin's %d and %d (%s): cut the program, or what volt makes it write",
				tw.goPath, g.lines, g.imports, maxRatio, p.lines, p.imports, tw.pyPath)
		}
		want := fmt.Sprintf("%d lines and %d imports against Lightning's %d and %d", g.lines, g.imports, p.lines, p.imports)
		if !strings.Contains(readme, want) {
			t.Errorf("the README's row for %s does not say %q", tw.goPath, want)
		}
	}
}

// TestProgramSize: the counting rule on small programs of each language.
func TestProgramSize(t *testing.T) {
	goSrc := "// Command x.\npackage main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/voltml/volt\"\n)\n\n// f does.\nfunc f() {\n\tfmt.Println(volt.Ptr(1)) // a trailing comment\n}\n"
	pySrc := "\"\"\"Docstring.\n\nimport os\n\"\"\"\nimport os\n\nfrom torch import nn  # noqa\n\n\n# a comment\ndef f():\n    return nn\n"
	if got, want := goSize(goSrc), (programSize{8, 2}); got != want {
		t.Errorf("goSize = %+v, want %+v", got, want)
	}
	if got, want := pySize(pySrc), (programSize{4, 2}); got != want {
		t.Errorf("pySize = %+v, want %+v", got, want)
	}
}

// readFile returns the file at path, failing the test when it cannot.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
