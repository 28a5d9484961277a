package optim

import (
	"bytes"
	"testing"
)

// TestReduceLROnPlateauStateAfterStepLeavesItUnchanged: the look-ahead a
// checkpoint takes at OnTrainEpochEnd is the state Step would give, and the
// scheduler itself does not move.
func TestReduceLROnPlateauStateAfterStepLeavesItUnchanged(t *testing.T) {
	for _, metrics := range [][]float64{{1}, {1, 2}, {3, 2, 2, 2}, {1, 1, 1, 1, 1}} {
		s := NewReduceLROnPlateau(PlateauMin)
		s.Factor, s.Patience = 0.5, 1
		s.Start(0.1)
		for _, m := range metrics[:len(metrics)-1] {
			s.Step(m)
		}
		before, _ := s.State()
		peeked, err := s.StateAfterStep(metrics[len(metrics)-1])
		if err != nil {
			t.Fatal(err)
		}
		if after, _ := s.State(); !bytes.Equal(before, after) {
			t.Errorf("%v: StateAfterStep changed the scheduler:\n%s\n%s", metrics, before, after)
		}
		s.Step(metrics[len(metrics)-1])
		if stepped, _ := s.State(); !bytes.Equal(peeked, stepped) {
			t.Errorf("%v: peeked %s, stepped %s", metrics, peeked, stepped)
		}
	}
}
