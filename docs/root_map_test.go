package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goFileName matches a Go file name or a glob of them (checkpoint_*.go).
var goFileName = regexp.MustCompile(`[a-z0-9_*]+\.go\b`)

// TestRootMapNamesEveryFile: the "Who owns what" section of package volt's
// doc names every Go file of the root package (tests aside) in a group,
// and every name or glob it gives matches a file: a file added, renamed
// or removed without the map fails here.
func TestRootMapNamesEveryFile(t *testing.T) {
	src, err := os.ReadFile("../doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "# Who owns what")
	if !ok {
		t.Fatal(`doc.go has no "# Who owns what" section`)
	}
	section, _, _ = strings.Cut(section, "Outside the root:")
	patterns := goFileName.FindAllString(section, -1)
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, pattern := range patterns {
		matched := false
		for _, f := range files {
			name := filepath.Base(f)
			if ok, _ := filepath.Match(pattern, name); ok && !strings.HasSuffix(name, "_test.go") {
				named[name], matched = true, true
			}
		}
		if !matched {
			t.Errorf("doc.go's map names %s, which matches no file of the root package", pattern)
		}
	}
	for _, f := range files {
		name := filepath.Base(f)
		if !strings.HasSuffix(name, "_test.go") && name != "doc.go" && !named[name] {
			t.Errorf("%s is in no group of doc.go's \"Who owns what\" map", name)
		}
	}
}
