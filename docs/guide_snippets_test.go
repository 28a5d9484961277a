package docs

import (
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// snippet is one ```go block of the guide.
type snippet struct {
	line    int    // of the opening fence, 1-based
	code    string // the block's text
	compile bool   // marked <!-- snippet: compile …-->: type-checked, not run
}

// guideSnippets returns the guide's Go blocks in order.
func guideSnippets(t *testing.T) []snippet {
	t.Helper()
	lines := strings.Split(readGuide(t), "\n")
	var out []snippet
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		sn := snippet{line: i + 1}
		for j := i - 1; j >= 0 && j >= i-2; j-- {
			if strings.HasPrefix(strings.TrimSpace(lines[j]), "<!-- snippet: compile") {
				sn.compile = true
			}
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		sn.code = strings.Join(body, "\n")
		out = append(out, sn)
	}
	return out
}

// expectedOutput matches `fmt.Println(…) // value`: a printed value the
// guide states.
var expectedOutput = regexp.MustCompile(`fmt\.Println\(.*\) // (\S.*)$`)

// snippetHarness declares what the guide's fragments use without
// defining: a Model (testutil.Boring, 64 examples in batches of 16), ctx,
// model and dm.
const snippetHarness = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

var (
	_ = context.Background
	_ = json.Marshal
	_ = fmt.Println
	_ = log.Fatal
	_ = time.Second
	_ = graph.Add
	_ = volt.Ptr[int]
	_ = data.DataLoader{}
	_ = optim.SGD
)

// Model is the guide's module: the boring regression model, and what the
// snippets add to it.
type Model struct {
	testutil.Boring
	Seen int
}

var (
	ctx   = context.Background()
	model = &Model{Boring: testutil.Boring{LR: 0.05}}
	dm    = testutil.NewBoringDataModule()
)
`

// TestGuideSnippetsRun compiles every Go block of the guide and runs those
// not marked compile-only, in order, in one program: a method is declared
// on the harness's Model, an expression becomes a variable, statements and
// a main become functions that main calls. A `fmt.Println(…) // value` in
// a run block must print value.
func TestGuideSnippetsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the guide's snippets")
	}
	snippets := guideSnippets(t)
	if len(snippets) < 5 {
		t.Fatalf("found %d Go blocks in %s; the fence pattern no longer matches", len(snippets), guide)
	}
	harness := snippetHarness
	var calls, want []string
	var programs []snippet // whole programs, type-checked on their own
	for i, sn := range snippets {
		code := strings.TrimSpace(sn.code)
		fn := fmt.Sprintf("snippet%d_line%d", i, sn.line)
		switch {
		case strings.HasPrefix(code, "import ") || strings.HasPrefix(code, "package "):
			programs = append(programs, sn)
			continue
		case strings.HasPrefix(code, "func main()"):
			code = "func " + fn + strings.TrimPrefix(code, "func main")
		case strings.HasPrefix(code, "func ") || strings.HasPrefix(code, "type ") || strings.HasPrefix(code, "//") && strings.Contains(code, "\nfunc "):
			harness += "\n// " + guide + ":" + fmt.Sprint(sn.line) + "\n" + code + "\n"
			continue
		case strings.HasPrefix(code, "volt.") && strings.HasSuffix(code, "}"):
			harness += fmt.Sprintf("\n// %s:%d\nvar _ = %s\n", guide, sn.line, code)
			continue
		default:
			code = "func " + fn + "() {\n" + code + "\n}"
		}
		harness += fmt.Sprintf("\n// %s:%d\n%s\n", guide, sn.line, code)
		if !sn.compile {
			calls = append(calls, fn+"()")
			for _, l := range strings.Split(sn.code, "\n") {
				if m := expectedOutput.FindStringSubmatch(l); m != nil {
					want = append(want, strings.TrimSpace(m[1]))
				}
			}
		}
	}
	harness += "\nfunc main() {\n\t" + strings.Join(calls, "\n\t") + "\n}\n"
	if len(calls) < 1 || len(want) < 1 {
		t.Fatalf("%d snippets to run, %d stated outputs: the classification no longer matches the guide", len(calls), len(want))
	}

	dir, err := os.MkdirTemp(".", "_guide_snippets") // inside the module, ignored by ./...
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	write := func(sub, name, src string) {
		t.Helper()
		if b, err := format.Source([]byte(src)); err == nil {
			src = string(b)
		}
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sub, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("run", "main.go", harness)
	pkgs := []string{"./" + dir + "/run"}
	for i, p := range programs {
		sub := fmt.Sprintf("program%d", i)
		src := p.code
		if !strings.HasPrefix(strings.TrimSpace(src), "package ") {
			src = "package main\n\n" + src
		}
		write(sub, "main.go", src)
		pkgs = append(pkgs, "./"+dir+"/"+sub)
	}
	if out, err := exec.Command("go", append([]string{"vet"}, pkgs...)...).CombinedOutput(); err != nil {
		t.Fatalf("the guide's snippets do not compile: %v\n%s\n--- generated program:\n%s", err, out, numbered(harness))
	}
	bin := filepath.Join(t.TempDir(), "snippets")
	if out, err := exec.Command("go", "build", "-o", bin, pkgs[0]).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.Command(bin)
	run.Dir = t.TempDir() // the default logger writes volt_logs there
	out, err := run.Output()
	if err != nil {
		t.Fatalf("the guide's snippets fail: %v\nstdout:\n%s", err, out)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	k := 0
	for _, line := range got {
		if k < len(want) && strings.TrimSpace(line) == want[k] {
			k++
		}
	}
	if k < len(want) {
		t.Errorf("the guide says the snippets print %q (in order); they printed:\n%s", want, out)
	}
}

// numbered returns src with line numbers, for failure messages.
func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d %s\n", i+1, l)
	}
	return b.String()
}
