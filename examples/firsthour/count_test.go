package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// codeLines counts the lines of src that are neither blank nor a comment
// only (comment is the language's line-comment mark), issue 24's measure;
// tools/firsthour/count.py counts the same way.
func codeLines(src, comment string) int {
	n := 0
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, comment) {
			n++
		}
	}
	return n
}

// TestCountsInTheREADME: the README states this program's lines and imports
// against the Lightning program's, as tools/firsthour/count.py counts them.
func TestCountsInTheREADME(t *testing.T) {
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	goSrc, pySrc := read("main.go"), read("../../tools/firsthour/lightning_firsthour.py")
	imports := regexp.MustCompile(`(?s)\nimport \((.*?)\n\)`).FindStringSubmatch(goSrc)
	goImports := strings.Count(strings.TrimSpace(imports[1]), "\"") / 2
	_, body, _ := strings.Cut(strings.SplitN(pySrc, `"""`, 3)[2], "\n") // without the module docstring
	pyImports := len(regexp.MustCompile(`(?m)^(import|from) `).FindAllString(body, -1))
	want := fmt.Sprintf("%d lines and %d imports against Lightning's %d and %d",
		codeLines(goSrc, "//"), goImports, codeLines(body, "#"), pyImports)
	if !strings.Contains(read("../../README.md"), want) {
		t.Errorf("the README does not say %q", want)
	}
}
