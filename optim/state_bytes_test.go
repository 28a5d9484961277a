package optim_test

import (
	"testing"

	"github.com/voltml/volt/optim"
)

// TestPlateauStateBytes pins the scheduler state's JSON as checkpoints have
// always held it (learning rates as encoding/json writes them, the best
// metric "+Inf" before the first step: jsonfloat.Float's spelling, which
// the schedulers' state had before all of volt's floats took it): a state
// written before loads, and is written again byte for byte.
func TestPlateauStateBytes(t *testing.T) {
	s := optim.NewReduceLROnPlateau(optim.PlateauMin)
	s.Factor, s.Patience, s.MinLR = 0.5, 1, 1e-7
	const config = `"config":{"Mode":"min","Factor":0.5,"Patience":1,"Threshold":0.0001,"ThresholdMode":"rel","Cooldown":0,"MinLR":1e-7,"Eps":1e-8}`
	want := []string{
		`{"kind":"ReduceLROnPlateau",` + config + `,"progress":{"started":true,"base_lr":0.00001,"lr":0.00001,"last_epoch":0},"extra":{"best":"+Inf","num_bad_epochs":0,"cooldown_counter":0}}`,
		`{"kind":"ReduceLROnPlateau",` + config + `,"progress":{"started":true,"base_lr":0.00001,"lr":0.00001,"last_epoch":1},"extra":{"best":1234567,"num_bad_epochs":0,"cooldown_counter":0}}`,
		`{"kind":"ReduceLROnPlateau",` + config + `,"progress":{"started":true,"base_lr":0.00001,"lr":0.00001,"last_epoch":2},"extra":{"best":1234567,"num_bad_epochs":1,"cooldown_counter":0}}`,
	}
	s.Start(1e-5)
	for i, metric := range []float64{0, 1234567, 2e6} {
		if i > 0 {
			s.Step(metric)
		}
		got, err := s.State()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[i] {
			t.Errorf("state after %d steps:\n got %s\nwant %s", i, got, want[i])
		}
		loaded := optim.NewReduceLROnPlateau(optim.PlateauMin)
		if err := loaded.LoadState([]byte(want[i])); err != nil {
			t.Fatalf("LoadState(%s): %v", want[i], err)
		}
		if again, err := loaded.State(); err != nil || string(again) != want[i] {
			t.Errorf("state loaded from %s is written again as %s (%v)", want[i], again, err)
		}
	}
}
