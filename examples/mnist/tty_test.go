package main

import (
	"bytes"
	"fmt"
	"github.com/voltml/volt/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests in this file run the built example as a user would: once on a
// real terminal (a tmux pane) and once with stderr on a pipe.

// exampleArgs trains 200 steps of the first epoch, validating every 100
// batches, so that validation runs while the epoch's training bar is open.
func exampleArgs(root string) []string {
	return []string{"-epochs", "1", "-max-steps", "200", "-val-every", "100", "-root", root}
}

// buildExample builds the example into a temporary directory.
func buildExample(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mnist")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOEXPERIMENT=simd")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// tmuxServer runs tmux commands against a private server (its own socket,
// no configuration file), killed when the test ends.
type tmuxServer struct {
	t      *testing.T
	socket string
}

func newTmuxServer(t *testing.T) *tmuxServer {
	if _, err := exec.LookPath("tmux"); err != nil {
		testenv.Missing(t, "tmux is not installed", "apt-get install tmux")
	}
	s := &tmuxServer{t: t, socket: fmt.Sprintf("volt-mnist-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", s.socket, "-f", "/dev/null"}, args...)...)
	// Not nested in the tmux the tests may run in.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") })
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestExampleProgressBarOnTerminal runs the example in a 160×50 tmux pane,
// records what it writes (tmux pipe-pane) and checks the screen at the end:
// one training bar with the batch counter, it/s, elapsed and remaining
// time, the running loss and the prog_bar metrics of training and
// validation; the validation bars drawn below it cleared; a test bar; and
// test_acc= as the last line of the example.
func TestExampleProgressBarOnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains the MNIST example under tmux")
	}
	tmux := newTmuxServer(t)
	bin := buildExample(t)
	dir := t.TempDir()
	raw := filepath.Join(dir, "pane.raw")

	var command strings.Builder
	// Wait for pipe-pane to be set up, then run; keep the pane open after.
	fmt.Fprintf(&command, "tmux -L %s wait-for start; %s", shellQuote(tmux.socket), shellQuote(bin))
	for _, a := range exampleArgs(dir) {
		command.WriteString(" " + shellQuote(a))
	}
	command.WriteString("; echo exit=$?; sleep 120")
	const session = "mnist"
	tmux.run("new-session", "-d", "-s", session, "-x", "160", "-y", "50", command.String())
	tmux.run("pipe-pane", "-t", session, "cat > "+shellQuote(raw))
	tmux.run("wait-for", "-S", "start")

	var screen string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		screen = tmux.run("capture-pane", "-p", "-t", session)
		if strings.Contains(screen, "exit=") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no exit= on the screen after 90s:\n%s", screen)
		}
	}
	t.Logf("screen:\n%s", strings.TrimRight(screen, "\n"))

	var lines []string // the screen's lines, without trailing blanks
	for line := range strings.Lines(screen) {
		if line = strings.TrimRight(line, " \n"); line != "" {
			lines = append(lines, line)
		}
	}
	if n := len(lines); n < 2 || lines[n-1] != "exit=0" || !regexp.MustCompile(`^test_acc=0\.\d{4} test_f1=0\.\d{4}$`).MatchString(lines[n-2]) {
		t.Fatalf("the screen does not end with test_acc=… test_f1=… and exit=0:\n%s", screen)
	}
	// volt's message as a plain line below the training bar, as Lightning's.
	if !slices.Contains(lines, "volt: Fit stopped: MaxSteps=200 reached.") || strings.Contains(screen, "level=INFO") {
		t.Errorf("no plain line volt: Fit stopped: MaxSteps=200 reached.:\n%s", screen)
	}
	if !hasLinePrefix(screen, "test_loss=") {
		t.Errorf("no test_loss= line:\n%s", screen)
	}

	// One training bar line: validation redrew it in place, not on new lines.
	var bars []string
	for _, line := range lines {
		if strings.HasPrefix(line, "Epoch ") {
			bars = append(bars, line)
		}
	}
	if len(bars) != 1 {
		t.Fatalf("%d training bar lines, want 1:\n%s", len(bars), screen)
	}
	bar := regexp.MustCompile(`^Epoch 0:  23%\|█+[ ▏▎▍▌▋▊▉]+\| 200/860 \[\d\d:\d\d<\d\d:\d\d, +\d+\.\d\dit/s, v_num=0, train_loss=\d\.\d+, val_loss=\d\.\d+, val_acc=0\.\d+\]$`)
	if !bar.MatchString(bars[0]) {
		t.Errorf("training bar\n%q\ndoes not match %s", bars[0], bar)
	}
	if !regexp.MustCompile(`(?m)^Testing DataLoader 0: 100%\|█+\| 157/157 \[\d\d:\d\d<00:00, +\d+\.\d\dit/s\]$`).MatchString(screen) {
		t.Errorf("no finished test bar:\n%s", screen)
	}
	for _, gone := range []string{"Sanity Checking", "Validation"} {
		if strings.Contains(screen, gone) {
			t.Errorf("the %s bar was not cleared:\n%s", gone, screen)
		}
	}

	// What was drawn on the way: the sanity check and validation bars, and
	// the return from the validation bar's line to the training bar's.
	var stream []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		if stream, err = os.ReadFile(raw); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(stream, []byte("exit=")) || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{"Sanity Checking DataLoader 0", "Validation DataLoader 0", "\x1b[1A\r", "\rEpoch 0: ", "| 100/860 [", "| 200/860 ["} {
		if !bytes.Contains(stream, []byte(want)) {
			t.Errorf("the pane was never sent %q", want)
		}
	}
	// The validation bar was drawn below the training bar: on a new line
	// after a training bar at batch 100.
	if !regexp.MustCompile(`\| 100/860 \[[^\n]*\n[^\n]*Validation`).Match(stream) {
		t.Errorf("no validation bar below the training bar in %q", stream)
	}
}

// TestExampleProgressPlainLines runs the example with stderr on a pipe: plain
// progress lines there, every 50 steps and at the epoch's end, without
// control characters; results on stdout.
func TestExampleProgressPlainLines(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains the MNIST example")
	}
	bin := buildExample(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append(exampleArgs(t.TempDir()), "-progress-every", "50")...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	t.Logf("stderr:\n%s", stderr.String())
	for name, s := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		if strings.ContainsAny(s, "\x1b\r") {
			t.Errorf("%s has control characters: %q", name, s)
		}
	}
	want := []*regexp.Regexp{
		// The model summary, printed once when Fit starts.
		regexp.MustCompile(`^  \| Name +\| Type +\| Params +\| Mode +\| DType$`),
		regexp.MustCompile(`^-+$`),
		regexp.MustCompile(`^0 \| hidden_0 \| Dense \| 201\.0 K \| trainable \| Float32$`),
		regexp.MustCompile(`^1 \| hidden_1 \| Dense \| 65\.8 K +\| trainable \| Float32$`),
		regexp.MustCompile(`^2 \| output +\| Dense \| 2\.6 K +\| trainable \| Float32$`),
		regexp.MustCompile(`^-+$`),
		regexp.MustCompile(`^269\.3 K +Trainable params$`),
		regexp.MustCompile(`^0 +Non-trainable params$`),
		regexp.MustCompile(`^269\.3 K +Total params$`),
		regexp.MustCompile(`^1\.077 +Total estimated model params size \(MB\)$`),
		regexp.MustCompile(`^epoch 0 batch 50/860 step 50 train_loss=\d\.\d+$`),
		regexp.MustCompile(`^epoch 0 batch 100/860 step 100 train_loss=\d\.\d+$`),
		regexp.MustCompile(`^epoch 0 batch 150/860 step 150 train_loss=\d\.\d+ val_loss=\d\.\d+ val_acc=0\.\d+$`),
		regexp.MustCompile(`^epoch 0 batch 200/860 step 200 train_loss=\d\.\d+ val_loss=\d\.\d+ val_acc=0\.\d+$`),
		regexp.MustCompile(`^epoch 0 step 200 train_loss=\d\.\d+ val_loss=\d\.\d+ val_acc=0\.\d+$`),
		regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d INFO volt: Fit stopped: MaxSteps=200 reached\.$`),
	}
	got := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("stderr has %d lines, want %d:\n%s", len(got), len(want), stderr.String())
	}
	for i, re := range want {
		if !re.MatchString(got[i]) {
			t.Errorf("stderr line %d\n%q\ndoes not match %s", i+1, got[i], re)
		}
	}
	if !regexp.MustCompile(`^confusion matrix \(rows: true digit, columns: predicted digit\):\n(?:[ :\d]+\n){11}test_loss=\d\.\d{4}\ntest_acc=0\.\d{4} test_f1=0\.\d{4}\n$`).MatchString(stdout.String()) {
		t.Errorf("stdout %q, want a confusion matrix, test_loss=… and test_acc=… test_f1=…", stdout.String())
	}
}
