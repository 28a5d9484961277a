package volt

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Signal handling (Config.HandleSignals): the first SIGTERM or SIGINT lets
// the current optimization step finish, saves a resumable checkpoint, runs
// the OnException hooks and makes Fit return an *InterruptedError naming the
// file; a second signal stops the process at once, with one line on stderr
// saying that nothing was saved (the same signal again within 250 ms is
// the same request delivered twice, as a scheduler and a Devices=N
// launcher may both deliver it). SIGUSR1 (SLURM's requeue
// signal) does the same and the error matches ErrRequeue: a program exits
// with ExitCode(err) (RequeueExitCode) so that its job script can requeue it.

// RequeueExitCode is the exit status ExitCode gives for a SIGUSR1 requeue.
const RequeueExitCode = 99

// ErrRequeue is matched (errors.Is) by the error Fit returns after SIGUSR1.
var ErrRequeue = errors.New("volt: requeue requested (SIGUSR1)")

// InterruptedError is returned by Fit after a handled signal.
type InterruptedError struct {
	Signal     os.Signal
	Checkpoint string // the resumable checkpoint saved, "" if saving failed
	Epoch      int
	GlobalStep int64
	SaveErr    error
}

// Error implements error.
func (e *InterruptedError) Error() string {
	if e.Checkpoint == "" {
		return fmt.Sprintf("volt: Fit interrupted by %v at epoch %d, global step %d; saving a checkpoint failed: %v", e.Signal, e.Epoch, e.GlobalStep, e.SaveErr)
	}
	return fmt.Sprintf("volt: Fit interrupted by %v at epoch %d, global step %d; resumable checkpoint saved to %s (resume with volt.FromCheckpoint(%q))",
		e.Signal, e.Epoch, e.GlobalStep, e.Checkpoint, e.Checkpoint)
}

// Is makes errors.Is(err, ErrRequeue) true after SIGUSR1.
func (e *InterruptedError) Is(target error) bool {
	return target == ErrRequeue && e.Signal == syscall.SIGUSR1
}

// Unwrap returns the save error, if any.
func (e *InterruptedError) Unwrap() error { return e.SaveErr }

// ExitCode maps a Fit error to a process exit status: 0 for nil,
// RequeueExitCode after SIGUSR1, 128+signal after SIGTERM/SIGINT, 1 otherwise.
func ExitCode(err error) int {
	var ie *InterruptedError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrRequeue):
		return RequeueExitCode
	case errors.As(err, &ie):
		if s, ok := ie.Signal.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return 1
}

// signalWatch turns signals into a flag the loops read after each step.
type signalWatch struct {
	ch   chan os.Signal
	done chan struct{}

	mu       sync.Mutex
	received os.Signal // the first signal, this process's or the ranks' agreed one
	at       time.Time // when received was set or this process's own copy of it came
	fromPeer bool      // received was adopted from the ranks' agreement; this process's own copy may still come
}

// sameRequestWithin is how soon after the first signal the same signal
// again is taken as the same request delivered twice, not as a second
// one: a cluster scheduler signals every process of a job, and a
// Devices=N launcher passes its own copy on to the ranks.
const sameRequestWithin = 250 * time.Millisecond

// watchSignals starts handling SIGTERM, SIGINT and SIGUSR1; stop restores
// the default handling.
func watchSignals() *signalWatch {
	w := &signalWatch{ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(w.ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	go func() {
		for {
			select {
			case <-w.done:
				return
			case s := <-w.ch:
				if !w.take(s, time.Now()) {
					continue
				}
				// A second signal stops at once, as the default handler would,
				// after saying so (nothing else will: the process just ends).
				fmt.Fprintf(os.Stderr, "volt: second signal (%v): stopping now, without saving a checkpoint\n", s)
				signal.Reset(syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
				if sig, ok := s.(syscall.Signal); ok {
					_ = syscall.Kill(os.Getpid(), sig)
				}
				return
			}
		}
	}()
	return w
}

// take records signal s, delivered to this process at now, and reports
// whether it is a second request (stop at once). The first signal is a
// request; the same signal again within sameRequestWithin is the same
// request delivered twice; and where the ranks' agreement already set the
// signal (a peer's copy was read first), this process's own copy of it,
// however late the kernel or the scheduler hands it over, is that request
// too.
func (w *signalWatch) take(s os.Signal, now time.Time) (second bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.received == nil:
		w.received, w.at = s, now
		return false
	case s == w.received && w.fromPeer:
		w.fromPeer, w.at = false, now
		return false
	case s == w.received && now.Sub(w.at) < sameRequestWithin:
		return false
	}
	return true
}

// adopt sets the signal the ranks agreed on, where this process has not
// received one itself yet.
func (w *signalWatch) adopt(s os.Signal) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.received == nil {
		w.received, w.at, w.fromPeer = s, time.Now(), true
	}
}

func (w *signalWatch) stop() {
	signal.Stop(w.ch)
	close(w.done)
}

// signalled returns the signal received, or nil.
func (w *signalWatch) signalled() os.Signal {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.received
}

// interruptBySignal saves the resumable checkpoint after a handled signal
// and returns the error Fit reports.
func (t *Trainer) interruptBySignal(s os.Signal) error {
	path := t.cfg.SignalCheckpointPath
	if path == "" {
		path = filepath.Join(t.LogDir(), "checkpoints", "interrupted.ckpt")
	}
	e := &InterruptedError{Signal: s, Epoch: t.CurrentEpoch(), GlobalStep: t.GlobalStep()}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.SaveErr = err
		return e
	}
	if err := t.SaveCheckpoint(path, false); err != nil {
		e.SaveErr = err
		return e
	}
	e.Checkpoint = path
	return e
}
