package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// servingLine is the line serve prints once it listens.
var servingLine = regexp.MustCompile(`serving .* on http://(\S+)/predict`)

// TestServeEndToEnd uses one program as a user would: fit, then serve the
// checkpoint in a new process; the answers equal volt.LoadPredictor's
// Predict on the same rows bitwise, a bad request gets a JSON error, and
// SIGINT or SIGTERM stop the server with exit status 0.
func TestServeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs training and serving processes")
	}
	dir := t.TempDir()
	ckpt := fitCheckpoint(t, "1", dir)
	p, err := volt.LoadPredictor(filepath.Join(dir, ckpt), &testutil.Boring{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rows := [][]float32{{1, 2, 3, 4, 5, 6, 7, 8}, {-1, 0.5, 0, 0, 2, 0, 0, 1}, {0, 0, 0, 0, 0, 0, 0, 0}}
	y, err := p.Predict(tensors.FromValue(rows))
	if err != nil {
		t.Fatal(err)
	}
	want := y.Value().([][]float32)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--input-shape", "8", "--max-batch", "4", ckpt)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), programEnv+"=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill() // ours; a no-op once it has exited
			lines := bufio.NewScanner(stderr)
			var url, printed string
			for url == "" && lines.Scan() {
				printed += lines.Text() + "\n"
				if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
					url = "http://" + m[1]
				}
			}
			if url == "" {
				t.Fatalf("serve printed no serving line:\n%s", printed)
			}
			rest := make(chan string, 1)
			go func() { b, _ := io.ReadAll(stderr); rest <- string(b) }()

			body, _ := json.Marshal(map[string]any{"inputs": rows})
			status, answer := postJSON(t, url+"/predict", body)
			var got struct{ Outputs [][]float32 }
			if err := json.Unmarshal(answer, &got); status != 200 || err != nil || len(got.Outputs) != len(want) {
				t.Fatalf("status %d, answer %s", status, answer)
			}
			for i := range want {
				if got.Outputs[i][0] != want[i][0] {
					t.Errorf("row %d: served %v, LoadPredictor's Predict %v", i, got.Outputs[i], want[i])
				}
			}
			status, answer = postJSON(t, url+"/predict", []byte(`{"inputs": [[1, 2]]}`))
			if status != 400 || !strings.Contains(string(answer), `inputs[0]: got 2 values, want 8`) {
				t.Errorf("a short row: status %d, answer %s", status, answer)
			}

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// Read stderr to its end (the process closes it as it exits)
			// before Wait, which closes the pipe: a Wait racing the read
			// could drop the last lines (CI saw an empty tail).
			var tail string
			select {
			case tail = <-rest:
			case <-time.After(30 * time.Second):
				t.Fatalf("serve did not stop within 30 s of %s", sig)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("serve after %s: %v (want exit status 0)\nstderr:\n%s", sig, err, printed+tail)
			}
			if !strings.Contains(tail, "stopped serving") {
				t.Errorf("serve's stderr after %s:\n%s", sig, tail)
			}
		})
	}
}

// postJSON posts body to url and returns the status and the answer.
func postJSON(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
