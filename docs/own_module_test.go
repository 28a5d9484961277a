package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/testenv"
)

// ownModuleBlocks returns the README's three blocks marked
// <!-- own-module: setup -->, <!-- own-module: main.go --> and
// <!-- own-module: run -->, in that order.
func ownModuleBlocks(t *testing.T, readme string) (setup, mainGo, run string) {
	t.Helper()
	block := func(mark string) string {
		i := strings.Index(readme, "<!-- own-module: "+mark+" -->")
		if i < 0 {
			t.Fatalf("README.md has no <!-- own-module: %s --> block", mark)
		}
		rest := readme[i:]
		open := strings.Index(rest, "```")
		if open < 0 {
			t.Fatalf("README.md's own-module %s mark has no fenced block after it", mark)
		}
		rest = rest[open:]
		rest = rest[strings.Index(rest, "\n")+1:]
		end := strings.Index(rest, "\n```")
		if end < 0 {
			t.Fatalf("README.md's own-module %s block is not closed", mark)
		}
		return rest[:end+1]
	}
	return block("setup"), block("main.go"), block("run")
}

// outerPath is PATH without the directory go test put first (the running
// toolchain's GOROOT/bin, which "go env GOROOT" names), so the blocks run
// the go command a user would: the one on PATH, which may be older than
// go1.27.4.
func outerPath(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	own := filepath.Join(strings.TrimSpace(string(out)), "bin")
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.Clean(dir) != own {
			keep = append(keep, dir)
		}
	}
	if len(keep) == 0 {
		return own
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// withEnv returns env with each of set's NAME=value in place of NAME's
// entries.
func withEnv(env []string, set ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		replaced := false
		for _, s := range set {
			if strings.HasPrefix(s, name+"=") {
				replaced = true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

var (
	toolchainLine = regexp.MustCompile(`(?m)^toolchain (\S+)$`)
	goLine        = regexp.MustCompile(`(?m)^go (\S+)$`)
	lossLine      = regexp.MustCompile(`(?m)^train_loss=(\S+)$`)
)

// TestOwnModule runs the README's "Use volt in your own module" blocks as
// they stand, in a fresh module in a temporary directory outside the
// repository, offline (GOPROXY=off: modules come from the module cache,
// which CI fills with go mod download, and volt's go.sum stands in for the
// checksum database), and checks that the program trains: the README's
// commands, module lines and program fail here when they drift.
func TestOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a module outside the repository (about 20 s)")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Missing(t, "no bash to run the README's shell blocks", "apt-get install bash")
	}
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	setup, mainGo, run := ownModuleBlocks(t, string(b))
	volt, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	voltMod, err := os.ReadFile(filepath.Join(volt, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := setup +
		"cat > main.go <<'VOLT_README_MAIN_GO'\n" + mainGo + "VOLT_README_MAIN_GO\n" +
		"cp \"$VOLT/go.sum\" go.sum # offline: the checksum database's lines\n" +
		run
	cmd := exec.Command(bash, "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = withEnv(os.Environ(), "VOLT="+volt, "GOPROXY=off", "PATH="+outerPath(t),
		"GOFLAGS=", "GOTOOLCHAIN=", "GOEXPERIMENT=", "GOWORK=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's own-module blocks failed (%v); script:\n%s\noutput:\n%s", err, script, out.String())
	}
	mods, _ := filepath.Glob(filepath.Join(dir, "*", "go.mod"))
	if len(mods) != 1 {
		t.Fatalf("the setup block made %d modules under %s, want 1", len(mods), dir)
	}
	userMod, err := os.ReadFile(mods[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []*regexp.Regexp{goLine, toolchainLine} {
		want, got := line.FindString(string(voltMod)), line.FindString(string(userMod))
		if want == "" || got != want {
			t.Errorf("the README's module has %q, volt's go.mod %q:\n%s", got, want, userMod)
		}
	}
	if !strings.Contains(string(userMod), "replace github.com/voltml/volt => "+volt) {
		t.Errorf("the README's module does not replace volt by $VOLT (%s):\n%s", volt, userMod)
	}
	m := lossLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the program printed no train_loss=… line:\n%s", out.String())
	}
	loss, err := strconv.ParseFloat(m[1], 64)
	if err != nil || loss >= 1e-6 {
		t.Errorf("train_loss=%s, want a number under 1e-6 (the README says so):\n%s", m[1], out.String())
	}
}
