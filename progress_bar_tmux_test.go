package volt_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/voltml/volt/internal/testenv"
)

// TestDefaultProgressBarInTmux runs testdata/progressbar (Lightning's
// testdata/lightning/progress_bar/small_run.py in volt: no ProgressBar
// configured, no Config.Log) in detached tmux panes of 80 and 160 columns
// and reads the screens (tmux capture-pane): no line wrapped, the training
// bar left as Lightning leaves it (cut at the width, as tqdm does, at 80),
// the sanity check and validation bars cleared, volt's message as a plain
// line below the bar, the test bar left.
func TestDefaultProgressBarInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a training program under tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		testenv.Missing(t, "tmux is not installed", "apt-get install tmux")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "progressbar")
	build := exec.Command("go", "build", "-o", bin, "./testdata/progressbar")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	socket := fmt.Sprintf("volt-pbar-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	tmux := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") })
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-L", socket, "kill-server").Run() })
	widths := []int{80, 160}
	for _, w := range widths {
		command := fmt.Sprintf("%s %s; echo exit=$?; sleep 120", shellQuote(bin), shellQuote(filepath.Join(dir, fmt.Sprint(w))))
		tmux("new-session", "-d", "-s", fmt.Sprint(w), "-x", fmt.Sprint(w), "-y", "30", command)
	}
	for _, w := range widths {
		t.Run(fmt.Sprintf("%d columns", w), func(t *testing.T) {
			session := fmt.Sprint(w)
			var screen string
			for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				screen = tmux("capture-pane", "-p", "-t", session)
				if strings.Contains(screen, "exit=") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no exit= on the screen after 90s:\n%s", screen)
				}
			}
			lines := nonEmptyLines(screen)
			joined := nonEmptyLines(tmux("capture-pane", "-p", "-J", "-t", session)) // wrapped lines joined
			if len(joined) != len(lines) {
				t.Errorf("%d of the screen's lines are wrapped ones:\n%s", len(lines)-len(joined), screen)
			}
			bar := `^Epoch 2: 100%\|█+\| 16/16 \[00:0\d<00:00, +\d+\.\d\dit/s, v_num=0, train_loss=\d\.\d+, val_loss=\d\.\d+\]$`
			if w == 80 {
				// 80 columns cut the line, as tqdm cuts Lightning's.
				bar = `^Epoch 2: 100%\|█\| 16/16 \[00:0\d<00:00, +\d+\.\d\dit/s, v_num=0, train_loss=\d\.\d+, val_`
			}
			want := []string{
				bar,
				`^volt: Fit stopped: MaxEpochs=3 reached\.$`,
				`^Testing DataLoader 0: 100%\|█+\| 2/2 \[00:00<00:00, +\d+\.\d\dit/s\]$`,
				`^exit=0$`,
			}
			if len(lines) != len(want) {
				t.Fatalf("%d lines on the screen, want %d:\n%s", len(lines), len(want), screen)
			}
			for i, re := range want {
				if !regexp.MustCompile(re).MatchString(lines[i]) {
					t.Errorf("line %d\n%q\ndoes not match %s", i+1, lines[i], re)
				}
				if n := utf8.RuneCountInString(lines[i]); n > w {
					t.Errorf("line %d has %d columns, the pane %d", i+1, n, w)
				}
			}
		})
	}
}

// nonEmptyLines returns s's lines without trailing blanks, empty ones left out.
func nonEmptyLines(s string) []string {
	var lines []string
	for line := range strings.Lines(s) {
		if line = strings.TrimRight(line, " \n"); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
