package callback_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
)

func TestNewStochasticWeightAveragingValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  callback.StochasticWeightAveragingConfig
		want string // substring of the error; "" for success
	}{
		{"minimal", callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.01}}, ""},
		{"no rates", callback.StochasticWeightAveragingConfig{}, "SWALRs: required"},
		{"zero rate", callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.1, 0}}, "SWALRs[1]: must be a finite number > 0"},
		{"both starts", callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.1}, StartEpoch: 2, StartFraction: 0.5}, "StartEpoch (2) or StartFraction (0.5), not both"},
		{"negative start", callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.1}, StartEpoch: -1}, "StartEpoch: must be >= 1"},
		{"fraction above 1", callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.1}, StartFraction: 1.5}, "StartFraction: must be in (0, 1]"},
		{"annealing", callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.1}, AnnealingEpochs: -3}, "AnnealingEpochs: must be >= 1"},
		{"strategy", callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.1}, AnnealingStrategy: "exp"}, `AnnealingStrategy: unknown "exp"; valid: "cos", "linear"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := callback.NewStochasticWeightAveraging(tc.cfg).Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestStochasticWeightAveragingMatchesHandComputed(t *testing.T) {
	const lr0, swaLR = 0.05, 0.01
	cosMix := func(x float64) float64 { a := (1 - math.Cos(math.Pi*x)) / 2; return (1-a)*lr0 + a*swaLR }
	tests := []struct {
		name    string
		cfg     callback.StochasticWeightAveragingConfig
		start   int       // first averaged epoch, from 0
		wantLRs []float64 // learning rate of each of the 6 epochs
	}{
		{
			name:    "cos, start epoch 3, annealing 2",
			cfg:     callback.StochasticWeightAveragingConfig{SWALRs: []float64{swaLR}, StartEpoch: 3, AnnealingEpochs: 2},
			start:   2,
			wantLRs: []float64{lr0, lr0, lr0, cosMix(0.5), swaLR, swaLR},
		},
		{
			name:    "linear, start epoch 2, annealing 4",
			cfg:     callback.StochasticWeightAveragingConfig{SWALRs: []float64{swaLR}, StartEpoch: 2, AnnealingEpochs: 4, AnnealingStrategy: "linear"},
			start:   1,
			wantLRs: []float64{lr0, lr0, 0.04, 0.03, 0.02, 0.01},
		},
		{
			name:    "default fraction 0.8 of 6 epochs",
			cfg:     callback.StochasticWeightAveragingConfig{SWALRs: []float64{swaLR}},
			start:   3, // int(6·0.8) = 4, counted from 1
			wantLRs: []float64{lr0, lr0, lr0, lr0, cosMix(0.1), cosMix(0.2)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			swa := callback.NewStochasticWeightAveraging(tc.cfg)
			log := newWeightLog(t)
			tr, err := fit(t, quiet(volt.Config{MaxEpochs: 6}), &boring{LR: lr0}, trainOnly(), swa, log)
			if err != nil {
				t.Fatal(err)
			}
			if swa.StartEpochIndex() != tc.start {
				t.Errorf("StartEpochIndex = %d, want %d", swa.StartEpochIndex(), tc.start)
			}
			if len(log.lrs) != len(tc.wantLRs) {
				t.Fatalf("%d epochs, want %d", len(log.lrs), len(tc.wantLRs))
			}
			for e, lrs := range log.lrs {
				if math.Abs(lrs[0]-tc.wantLRs[e]) > 1e-7 {
					t.Errorf("epoch %d: learning rate %.9g, want %.9g", e, lrs[0], tc.wantLRs[e])
				}
			}
			for path := range log.epochs[0] {
				want := make([]float64, len(log.epochs[0][path]))
				averaged := log.epochs[tc.start:]
				for _, w := range averaged {
					for i, x := range w[path] {
						want[i] += x / float64(len(averaged))
					}
				}
				closeValues(t, path, variableValues(t, tr, path), want, 1e-6)
				closeValues(t, "mean of "+path, variableValues(t, tr, swa.AveragePath(path)), want, 1e-6)
			}
		})
	}
}

func TestStochasticWeightAveragingNeedsMaxEpochs(t *testing.T) {
	swa := callback.NewStochasticWeightAveraging(callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.01}})
	_, err := fit(t, quiet(volt.Config{MaxEpochs: -1, MaxSteps: 4}), &boring{}, trainOnly(), swa)
	if err == nil || !strings.Contains(err.Error(), "set Config.MaxEpochs") {
		t.Fatalf("Fit error %v, want one asking for MaxEpochs", err)
	}
}

func TestStochasticWeightAveragingResumeParity(t *testing.T) {
	tests := []struct {
		name        string
		atBatch     int64
		when        string
		saverBefore bool
	}{
		{"epoch end in the averaging phase, saver before", 24, "epoch", true},
		{"epoch end in the averaging phase, saver after", 24, "epoch", false},
		{"mid-epoch in the averaging phase", 29, "batch", false},
		{"before the averaging phase", 5, "batch", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			volt.SeedEverything(3)
			defer volt.SeedEverything(0)
			path := filepath.Join(t.TempDir(), "swa.ckpt")
			newSWA := func() *callback.StochasticWeightAveraging {
				swa := callback.NewStochasticWeightAveraging(callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.002}, StartEpoch: 2, AnnealingEpochs: 3})
				return swa
			}
			sv := &stepSaver{path: path, atBatch: tc.atBatch, when: tc.when}
			cbs := []volt.Callback{newSWA(), sv}
			if tc.saverBefore {
				cbs[0], cbs[1] = cbs[1], cbs[0]
			}
			u, err := fit(t, quiet(volt.Config{MaxEpochs: 5}), &ckptAdam{}, averagingData(), cbs...)
			if err != nil {
				t.Fatal(err)
			}
			if !sv.saved {
				t.Fatal("the checkpoint was not saved")
			}
			volt.SeedEverything(99)
			r := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 5, Callbacks: []volt.Callback{newSWA()}}), &ckptAdam{}, averagingData(), volt.FromCheckpoint(path))
			ckptSameWeights(t, ckptWeights(t, u), ckptWeights(t, r))
		})
	}
}
