package volt

import (
	"os"
	"syscall"
	"testing"
)

// TestLateSignalWaitsForAgreement: in a data-parallel job a rank stops for
// a signal only once the ranks agreed on it; one that arrived after this
// batch's agreement waits for the next (stopping alone, the rank's
// checkpoint save met the other ranks' next batch: the job hung or
// aborted). A single process stops for the signal it received.
func TestLateSignalWaitsForAgreement(t *testing.T) {
	for _, tc := range []struct {
		name            string
		ddp, agreed     bool
		received, wants os.Signal
	}{
		{"one process", false, false, syscall.SIGTERM, syscall.SIGTERM},
		{"ranks, after this batch's agreement", true, false, syscall.SIGTERM, nil},
		{"ranks, agreed", true, true, syscall.SIGINT, syscall.SIGINT},
		{"ranks, no signal", true, false, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &signalWatch{}
			if tc.received != nil {
				w.received.Store(tc.received)
			}
			tr := &Trainer{run: &run{signals: w}}
			tr.ddp.on, tr.ddp.agreedInterrupt = tc.ddp, tc.agreed
			if got := tr.signalToHonour(); got != tc.wants {
				t.Errorf("signalToHonour() = %v, want %v", got, tc.wants)
			}
		})
	}
}
