package resumeprop

import (
	"testing"
)

// run is an interrupted run as the ratchet sees it: the scenario, the
// crashes that happened and where each resumed part's checkpoint was
// taken.
type run struct {
	sc    Scenario
	fired []Crash
	from  []savedAt
}

// knownBug is a difference expected until a fix merges: the bug (issue
// 21's number, or "new: …" for one this test found, reported to the
// lead), and which differences, in which runs, it explains.
type knownBug struct {
	bug       string
	signature string
	explains  func(r run, d diff) bool
	// flaky: the difference depends on the moment of a SIGKILL, so a run
	// of the test may not meet it; the ratchet does not require it.
	flaky bool
	seen  int // differences explained in this run of the test
}

// knownBugs is the ratchet: remove an entry when its fix merges. A
// difference no entry explains fails the test, and so does an entry that
// explains none in a run of every group.
var knownBugs = []*knownBug{}

// explain returns the known bug that explains d, or nil.
func explain(r run, d diff) *knownBug {
	for _, b := range knownBugs {
		if b.explains(r, d) {
			return b
		}
	}
	return nil
}

// checkRatchet fails for every known bug that explained no difference: its
// fix has merged (or the generator no longer reaches it), so its entry must
// go.
func checkRatchet(t *testing.T) {
	t.Helper()
	for _, b := range knownBugs {
		if b.seen == 0 && !b.flaky {
			t.Errorf("ratchet: %s (%s) no longer happens in any case; remove its entry from knownBugs", b.bug, b.signature)
		}
	}
}
