package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeListsEveryExample checks that the README's example table has a
// row running each program under examples/ (internal/ holds shared code).
func TestReadmeListsEveryExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Examples\n")
	if !ok {
		t.Fatal(`README.md has no "## Examples" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	entries, err := os.ReadDir("../examples")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "internal" {
			continue
		}
		if _, err := os.Stat(filepath.Join("../examples", e.Name(), "main.go")); err != nil {
			continue
		}
		n++
		if !strings.Contains(table, "| `GOEXPERIMENT=simd go run ./examples/"+e.Name()) {
			t.Errorf("README.md's example table has no row running ./examples/%s", e.Name())
		}
	}
	if n < 5 {
		t.Errorf("found %d example programs under examples/; the search no longer finds them", n)
	}
}
