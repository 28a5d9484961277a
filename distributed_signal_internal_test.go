package volt

import (
	"os"
	"syscall"
	"testing"
	"time"
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
				w.received = tc.received
			}
			tr := &Trainer{run: &run{signals: w}}
			tr.ddp.on, tr.ddp.agreedInterrupt = tc.ddp, tc.agreed
			if got := tr.signalToHonour(); got != tc.wants {
				t.Errorf("signalToHonour() = %v, want %v", got, tc.wants)
			}
		})
	}
}

// TestSignalTakeAndAdopt: which deliveries of a signal are a second
// request (stop at once, without saving). A rank whose agreement adopted a
// peer's signal before its own copy came must take that copy, however
// late, as the same request (CI: the copy came after 250 ms under load,
// the rank killed itself and wrote no result).
func TestSignalTakeAndAdopt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type delivery struct {
		sig   os.Signal
		after time.Duration // since t0
	}
	for _, tc := range []struct {
		name    string
		adopted os.Signal // from the ranks' agreement, before any delivery
		got     []delivery
		second  []bool // per delivery
	}{
		{"first", nil, []delivery{{syscall.SIGTERM, 0}}, []bool{false}},
		{"same again at once", nil, []delivery{{syscall.SIGTERM, 0}, {syscall.SIGTERM, 100 * time.Millisecond}}, []bool{false, false}},
		{"same again later", nil, []delivery{{syscall.SIGTERM, 0}, {syscall.SIGTERM, time.Second}}, []bool{false, true}},
		{"another at once", nil, []delivery{{syscall.SIGTERM, 0}, {syscall.SIGINT, time.Millisecond}}, []bool{false, true}},
		{"own copy of the adopted one, late", syscall.SIGTERM, []delivery{{syscall.SIGTERM, 5 * time.Second}}, []bool{false}},
		{"own copy, then the same again later", syscall.SIGTERM, []delivery{{syscall.SIGTERM, 5 * time.Second}, {syscall.SIGTERM, 7 * time.Second}}, []bool{false, true}},
		{"another than the adopted one", syscall.SIGTERM, []delivery{{syscall.SIGINT, 5 * time.Second}}, []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &signalWatch{}
			if tc.adopted != nil {
				w.adopt(tc.adopted)
			}
			for i, d := range tc.got {
				if got := w.take(d.sig, t0.Add(d.after)); got != tc.second[i] {
					t.Errorf("delivery %d (%v at +%v): second request %v, want %v", i, d.sig, d.after, got, tc.second[i])
				}
			}
		})
	}
}
