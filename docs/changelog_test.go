package docs

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt"
)

// versionHeading matches a released version's heading in CHANGELOG.md:
// "## [1.2.3] - 2006-01-02".
var versionHeading = regexp.MustCompile(`^## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$`)

// changeKinds are Keep a Changelog's section names.
var changeKinds = map[string]bool{"Added": true, "Changed": true, "Deprecated": true, "Removed": true, "Fixed": true, "Security": true}

// TestChangelog checks CHANGELOG.md's shape (Keep a Changelog): an
// Unreleased section first, then released versions newest first with valid
// dates, only the standard kinds of change, a link for every heading, and
// volt.Version equal to the newest release.
func TestChangelog(t *testing.T) {
	b, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	lines := strings.Split(text, "\n")
	var headings []string
	var versions [][3]int
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "## "):
			headings = append(headings, line)
			if line == "## [Unreleased]" {
				if len(headings) != 1 {
					t.Errorf("line %d: [Unreleased] must be the first section", i+1)
				}
				continue
			}
			m := versionHeading.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("line %d: %q is neither \"## [Unreleased]\" nor \"## [X.Y.Z] - YYYY-MM-DD\"", i+1, line)
				continue
			}
			if _, err := time.Parse(time.DateOnly, m[4]); err != nil {
				t.Errorf("line %d: date %q: %v", i+1, m[4], err)
			}
			var v [3]int
			for j := range v {
				v[j], _ = strconv.Atoi(m[j+1])
			}
			if n := len(versions); n > 0 && !older(v, versions[n-1]) {
				t.Errorf("line %d: version %v is not older than %v above it", i+1, v, versions[n-1])
			}
			versions = append(versions, v)
		case strings.HasPrefix(line, "### "):
			if kind := strings.TrimPrefix(line, "### "); !changeKinds[kind] {
				t.Errorf("line %d: section %q is not one of Added, Changed, Deprecated, Removed, Fixed, Security", i+1, kind)
			}
		}
	}
	if len(headings) == 0 || headings[0] != "## [Unreleased]" {
		t.Errorf("CHANGELOG.md has no \"## [Unreleased]\" section first")
	}
	if len(versions) == 0 {
		t.Fatal("CHANGELOG.md lists no released version")
	}
	newest := fmt.Sprintf("%d.%d.%d", versions[0][0], versions[0][1], versions[0][2])
	if volt.Version != newest {
		t.Errorf("volt.Version is %q, the newest release in CHANGELOG.md is %q: release both together", volt.Version, newest)
	}
	for _, h := range headings {
		label := h[strings.Index(h, "[") : strings.Index(h, "]")+1]
		if !strings.Contains(text, "\n"+label+": ") {
			t.Errorf("heading %q has no link reference %q at the end", h, label+": URL")
		}
	}
}

// older reports whether version a precedes version b.
func older(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
