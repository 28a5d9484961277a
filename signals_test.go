package volt_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// signaller sends the process signals after a given global step, waiting
// until each is delivered and, after the first, until volt's handler has
// taken it (volt.SignalReceived): the loop sees it when the step ends
// however loaded the machine is, with no sleep that hopes it did.
type signaller struct {
	at      int64
	signals []syscall.Signal
	sent    bool
	// gap is the wait before each later signal: the same signal again
	// within 250 ms is the same request delivered twice, so a second
	// request needs a gap longer than that. linger is a wait after the
	// last signal (a child that must die by the second one dies in it).
	gap, linger time.Duration
}

func (s *signaller) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if s.sent || t.GlobalStep() != s.at {
		return nil
	}
	s.sent = true
	// The runtime delivers a signal to every channel notified of it, this
	// one too: receiving it here says it has reached volt's.
	delivered := make(chan os.Signal, 1)
	for _, sig := range s.signals {
		signal.Notify(delivered, sig)
	}
	defer signal.Stop(delivered)
	for i, sig := range s.signals {
		if i > 0 {
			time.Sleep(s.gap)
		}
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			return err
		}
		select {
		case <-delivered:
		case <-time.After(time.Minute):
			return fmt.Errorf("signaller: %v not delivered within a minute", sig)
		}
		if i == 0 {
			if err := waitForHandler(t); err != nil {
				return err
			}
		}
	}
	time.Sleep(s.linger)
	return nil
}

// waitForHandler returns once t's signal handler has taken a signal, or an
// error after a minute.
func waitForHandler(t *volt.Trainer) error {
	for deadline := time.Now().Add(time.Minute); volt.SignalReceived(t) == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("signaller: volt's signal handler did not take the signal within a minute")
		}
	}
	return nil
}

func TestSignalSavesAResumableCheckpoint(t *testing.T) {
	tests := []struct {
		name    string
		sig     syscall.Signal
		requeue bool
		code    int
	}{
		{"SIGTERM", syscall.SIGTERM, false, 128 + 15},
		{"SIGINT", syscall.SIGINT, false, 128 + 2},
		{"SIGUSR1 requeue", syscall.SIGUSR1, true, volt.RequeueExitCode},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sig.ckpt")
			volt.SeedEverything(4)
			defer volt.SeedEverything(0)
			cfg := quiet(volt.Config{MaxEpochs: 3, HandleSignals: true, SignalCheckpointPath: path,
				Callbacks: []volt.Callback{&signaller{at: 5, signals: []syscall.Signal{tc.sig}}}})
			tr := testutil.NewTrainer(t, cfg)
			err := tr.Fit(t.Context(), &adamBoring{}, resumeData())
			var ie *volt.InterruptedError
			if !errors.As(err, &ie) || ie.Checkpoint != path || ie.GlobalStep != 5 {
				t.Fatalf("Fit error = %v", err)
			}
			if !strings.Contains(err.Error(), "resumable checkpoint saved to "+path) {
				t.Errorf("error does not say where the checkpoint is: %v", err)
			}
			if errors.Is(err, volt.ErrRequeue) != tc.requeue || volt.ExitCode(err) != tc.code {
				t.Errorf("requeue %v, exit code %d; want %v, %d", errors.Is(err, volt.ErrRequeue), volt.ExitCode(err), tc.requeue, tc.code)
			}
			if tr.State().Status != volt.StatusInterrupted {
				t.Errorf("status %v", tr.State().Status)
			}
			// Resume and compare with a run that was never interrupted.
			volt.SeedEverything(4)
			u := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 3}), &adamBoring{}, resumeData())
			r := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 3}), &adamBoring{}, resumeData(), volt.FromCheckpoint(path))
			if !equalWeights(weights(t, u), weights(t, r)) {
				t.Error("resuming from the signal checkpoint does not reproduce the uninterrupted run")
			}
		})
	}
}

// TestSecondSignalStopsAtOnce runs a child process (this test binary) that
// receives two SIGTERMs in a row: it must die by the signal, without saving.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	if os.Getenv("VOLT_SIGNAL_CHILD") != "" {
		path := os.Getenv("VOLT_SIGNAL_CHILD")
		cfg := quiet(volt.Config{MaxEpochs: 3, HandleSignals: true, SignalCheckpointPath: path,
			// Generous waits for a loaded machine: the process must die
			// during the linger, by the second signal.
			Callbacks: []volt.Callback{&signaller{at: 2, signals: []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM},
				gap: 500 * time.Millisecond, linger: 10 * time.Second}}})
		tr := testutil.NewTrainer(t, cfg)
		err := tr.Fit(t.Context(), &boring{}, resumeData())
		t.Fatalf("Fit returned after two signals: %v", err)
	}
	path := filepath.Join(t.TempDir(), "never.ckpt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalStopsAtOnce$")
	cmd.Env = append(os.Environ(), "VOLT_SIGNAL_CHILD="+path)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	ws, ok := exitErr.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("child did not die by SIGTERM: %v\n%s", err, out)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a checkpoint was saved after the second signal")
	}
}
