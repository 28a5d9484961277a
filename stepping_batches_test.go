package volt_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// steppingCase is one case of testdata/lightning/stepping/estimated_stepping_batches.json
// (gen_stepping_batches.py): what real Lightning 2.2.5 answered.
type steppingCase struct {
	Name      string `json:"name"`
	Rows      int    `json:"rows"`
	BatchSize int    `json:"batch_size"`
	Iterable  bool   `json:"iterable"`
	Trainer   struct {
		MaxEpochs  *int     `json:"max_epochs"`
		MaxSteps   int64    `json:"max_steps"`
		Accumulate int      `json:"accumulate_grad_batches"`
		Limit      *float64 `json:"limit_train_batches"`
		Overfit    int      `json:"overfit_batches"`
		FastDevRun int      `json:"fast_dev_run"`
	} `json:"trainer"`
	// Batches, Configure and TrainStart are numbers, "inf", or -1.
	Batches    any `json:"num_training_batches"`
	Configure  any `json:"configure_optimizers"`
	TrainStart any `json:"on_train_start"`
}

// config maps the case's Lightning arguments to volt's; limit_train_batches
// is an int (Batches) or a float (Fraction) in Lightning.
func (c *steppingCase) config(t *testing.T, raw json.RawMessage) volt.Config {
	cfg := volt.Config{MaxSteps: c.Trainer.MaxSteps, AccumulateGradBatches: c.Trainer.Accumulate, FastDevRun: c.Trainer.FastDevRun}
	if c.Trainer.MaxEpochs != nil {
		cfg.MaxEpochs = *c.Trainer.MaxEpochs
	}
	if c.Trainer.Overfit > 0 {
		cfg.OverfitBatches = volt.Batches(c.Trainer.Overfit)
	}
	if c.Trainer.Limit != nil {
		var args struct {
			Limit json.Number `json:"limit_train_batches"`
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			t.Fatal(err)
		}
		if n, err := args.Limit.Int64(); err == nil {
			cfg.LimitTrainBatches = volt.Batches(n)
		} else {
			cfg.LimitTrainBatches = volt.Fraction(*c.Trainer.Limit)
		}
	}
	return cfg
}

// steppingProbe records EstimatedSteppingBatches where Lightning's module
// read it: in ConfigureOptimizers and OnTrainStart; it then stops the run
// before any step is compiled.
type steppingProbe struct {
	boring
	t                     *volt.Trainer
	configure, trainStart estimate
	batches               int
}

type estimate struct {
	n   int64
	err error
}

var errStopProbe = errors.New("probe done")

func (p *steppingProbe) Setup(t *volt.Trainer, _ volt.Stage) error { p.t = t; return nil }

func (p *steppingProbe) ConfigureOptimizers() volt.Optimizers {
	p.configure.n, p.configure.err = p.t.EstimatedSteppingBatches()
	return p.boring.ConfigureOptimizers()
}

func (p *steppingProbe) OnTrainStart(t *volt.Trainer) error {
	p.trainStart.n, p.trainStart.err = t.EstimatedSteppingBatches()
	p.batches = t.NumTrainingBatches()
	return errStopProbe
}

// check compares an estimate with Lightning's answer: a number, "inf"
// (ErrUnboundedTraining) or -1 (iterable data without MaxSteps: an error).
func (e estimate) check(t *testing.T, where string, want any) {
	t.Helper()
	switch want {
	case "inf":
		if !errors.Is(e.err, volt.ErrUnboundedTraining) {
			t.Errorf("%s: %d, %v; Lightning says infinity, want ErrUnboundedTraining", where, e.n, e.err)
		}
	case -1.0:
		if e.err == nil || !strings.Contains(e.err.Error(), "no known length and Config.MaxSteps is not set") {
			t.Errorf("%s: %d, %v; Lightning says -1, want an error naming the unknown length", where, e.n, e.err)
		}
	default:
		if e.err != nil || float64(e.n) != want {
			t.Errorf("%s: %d, %v; Lightning says %v", where, e.n, e.err, want)
		}
	}
}

// TestEstimatedSteppingBatchesMatchesLightning runs every case Lightning
// answered and compares the estimate in ConfigureOptimizers and OnTrainStart,
// and the batches per epoch.
func TestEstimatedSteppingBatchesMatchesLightning(t *testing.T) {
	raw, err := os.ReadFile("testdata/lightning/stepping/estimated_stepping_batches.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 15 {
		t.Fatalf("%d cases in the golden file", len(golden.Cases))
	}
	for _, rc := range golden.Cases {
		var c steppingCase
		if err := json.Unmarshal(rc, &c); err != nil {
			t.Fatal(err)
		}
		var trainerArgs struct {
			Trainer json.RawMessage `json:"trainer"`
		}
		if err := json.Unmarshal(rc, &trainerArgs); err != nil {
			t.Fatal(err)
		}
		t.Run(c.Name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(c.config(t, trainerArgs.Trainer)))
			loader := &data.DataLoader{Dataset: regression(c.Rows, 1), BatchSize: c.BatchSize}
			if c.Iterable {
				loader = &data.DataLoader{Iterable: iterable{c.Rows}, BatchSize: c.BatchSize}
			}
			p := &steppingProbe{}
			err := tr.Fit(t.Context(), p, volt.Loaders{Train: loader})
			if !errors.Is(err, errStopProbe) {
				t.Fatalf("Fit: %v, want the probe's stop", err)
			}
			p.configure.check(t, "ConfigureOptimizers", c.Configure)
			p.trainStart.check(t, "OnTrainStart", c.TrainStart)
			wantBatches := c.Batches
			if wantBatches == "inf" {
				wantBatches = -1.0 // volt's unknown length
			}
			if float64(p.batches) != wantBatches {
				t.Errorf("NumTrainingBatches %d, Lightning's num_training_batches %v", p.batches, c.Batches)
			}
		})
	}
}

// TestEstimatedSteppingBatchesOutsideFit: without a training loader there is
// no estimate, except where the data does not matter (MaxEpochs -1).
func TestEstimatedSteppingBatchesOutsideFit(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  volt.Config
		want int64
		err  string
	}{
		{"epochs need the loader", volt.Config{MaxEpochs: 2}, 0, "needs the training loader: call it during Fit"},
		{"max steps alone", volt.Config{MaxSteps: 9}, 9, ""},
		{"no end", volt.Config{MaxEpochs: -1}, 0, "training has no end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(tc.cfg))
			n, err := tr.EstimatedSteppingBatches()
			if tc.err == "" && (err != nil || n != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("EstimatedSteppingBatches() = %d, %v; want %d, %q", n, err, tc.want, tc.err)
			}
		})
	}
}
