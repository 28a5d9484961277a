package volt

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// firstRecorder is the fake engine recording which steps the decision side
// asks it to build before training (trainSteps.prepare's first).
type firstRecorder struct {
	*fakeSteps
	first []string
}

func (r *firstRecorder) prepare(b *data.Batch, first []programKey) error {
	for _, k := range first {
		r.first = append(r.first, fmt.Sprintf("%d/%s", k.opt, modeName(k.mode)))
	}
	return r.fakeSteps.prepare(b, first)
}

// The decision side alone names the steps the first batch runs and sends
// every step through the seam, TBPTT's included: the programs prepared,
// the steps run, and the optimization steps counted, per configuration.
func TestOptimizationDecidesTheSteps(t *testing.T) {
	two := Optimizers{{Optimizer: optim.SGD(0.1)}, {Optimizer: optim.SGD(0.1)}}
	alternating := Optimizers{{Optimizer: optim.SGD(0.1), Frequency: 2}, {Optimizer: optim.SGD(0.1)}}
	tests := []struct {
		name        string
		cfg         Config
		module      Module
		moduleSteps int // what the fake reports for a step the module drives
		wantFirst   []string
		wantCalls   []string
		wantSteps   int64
	}{
		{name: "one optimizer", module: untraced{},
			wantFirst: []string{"0/apply"}, wantCalls: []string{"0/apply", "0/apply"}, wantSteps: 2},
		{name: "accumulation: the first batch accumulates", cfg: Config{AccumulateGradBatches: 2}, module: untraced{},
			wantFirst: []string{"0/acc"}, wantCalls: []string{"0/acc", "0/acc+apply"}, wantSteps: 1},
		{name: "two optimizers, both every batch", module: untraced{opts: two},
			wantFirst: []string{"0/apply", "1/apply"}, wantCalls: []string{"0/apply", "1/apply", "0/apply", "1/apply"}, wantSteps: 2},
		{name: "alternating: only the first batch's optimizer", module: untraced{opts: alternating},
			wantFirst: []string{"0/apply"}, wantCalls: []string{"0/apply", "0/apply"}, wantSteps: 2},
		{name: "manual", module: manualUntraced{}, moduleSteps: 2,
			wantFirst: []string{"-1/apply"}, wantCalls: []string{"-1/apply", "-1/apply"}, wantSteps: 4},
		{name: "TBPTT: nothing built ahead, splits counted", cfg: Config{TruncatedBPTTSteps: 2}, module: untraced{}, moduleSteps: 3,
			wantFirst: nil, wantCalls: []string{"-2/apply", "-2/apply"}, wantSteps: 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.MaxEpochs = 1
			cfg.DisableLoggers, cfg.DisableCheckpointing, cfg.DisableModelSummary = true, true, true
			cfg.Log = slog.New(slog.DiscardHandler)
			tr, err := NewTrainer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rec := &firstRecorder{fakeSteps: &fakeSteps{manualSteps: tc.moduleSteps}}
			tr.cfg.fakeSteps = rec
			examples := make(data.Slice, 4)
			for i := range examples {
				examples[i] = data.Example{Inputs: []data.Field{{Value: []float32{float32(i)}}}, Labels: []data.Field{{Value: []float32{1}}}}
			}
			if err := tr.Fit(context.Background(), tc.module, Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 2}}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rec.first, tc.wantFirst) {
				t.Errorf("prepared %v, want %v", rec.first, tc.wantFirst)
			}
			if !slices.Equal(rec.calls, tc.wantCalls) {
				t.Errorf("steps %v, want %v", rec.calls, tc.wantCalls)
			}
			if got := tr.GlobalStep(); got != tc.wantSteps {
				t.Errorf("global step %d, want %d", got, tc.wantSteps)
			}
		})
	}
}
