// Command ckptrace is one of several runs started at once with the same
// explicit ModelCheckpoint directory and file-name template (the test in
// this directory starts them). It trains a small regressor for -epochs,
// keeping the top -k checkpoints by val_loss and last.ckpt (SaveLast) in
// -dir, and prints, as JSON, its run name (-run, also a hyper-parameter
// that every checkpoint it writes records) and the checkpoints its
// ModelCheckpoint holds at the end.
// It uses volt's public API only, as a user's program would.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
)

// Net is a one-hidden-layer regressor; Run names the run that trained it.
type Net struct {
	Run string
	LR  float64
}

func (m *Net) forward(s *volt.Step, x *volt.Node) *volt.Node {
	return nn.Linear(s.Scope().In("out"), nn.ReLU(nn.Linear(s.Scope().In("hidden"), x, 16)), 1)
}
func (m *Net) TrainingStep(s *volt.Step, b volt.Batch) *volt.Node {
	return nn.MSELoss(m.forward(s, b.Input(0)), b.Label(0))
}
func (m *Net) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", nn.MSELoss(m.forward(s, b.Input(0)), b.Label(0)))
}
func (m *Net) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.LR)) }
func (m *Net) HParams() map[string]any              { return volt.HParamsOf(m) }

// Data is y = sum(x) on 256 examples of 4 features, the same in every run.
type Data struct{ data.Datasets }

func (d *Data) Setup(volt.Stage) error {
	xs := data.NewGenerator(0).Randn(256, 4)
	ys := make([][]float32, len(xs))
	for i, x := range xs {
		ys[i] = []float32{x[0] + x[1] + x[2] + x[3]}
	}
	all, err := data.Rows(xs, ys)
	if err != nil {
		return err
	}
	d.Train, d.Val = all[:192], all[192:]
	return nil
}

// Result is what a run prints.
type Result struct {
	Run  string             `json:"run"`
	Best string             `json:"best"`
	Kept map[string]float64 `json:"kept"`
	Last string             `json:"last"`
}

func main() {
	run := flag.String("run", "a", "this run's name, recorded in its checkpoints")
	dir := flag.String("dir", "", "the ModelCheckpoint directory, shared by the runs")
	epochs := flag.Int("epochs", 20, "epochs")
	k := flag.Int("k", 2, "SaveTopK")
	filename := flag.String("filename", "{epoch}", "ModelCheckpoint's Filename template")
	flag.Parse()
	ckpt := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{
		Dirpath: *dir, Filename: *filename, Monitor: "val_loss", SaveTopK: volt.Ptr(*k), SaveLast: true})
	trainer, err := volt.NewTrainer(volt.Config{
		MaxEpochs: *epochs, Seed: volt.Ptr(uint64(1)), DisableLoggers: true, DisableModelSummary: true,
		EnableProgressBar: volt.Ptr(false), Callbacks: []volt.Callback{ckpt}})
	if err == nil {
		err = trainer.Fit(context.Background(), &Net{Run: *run, LR: 1e-2}, &Data{data.Datasets{BatchSize: 16}})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ckptrace:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(Result{Run: *run, Best: ckpt.BestModelPath(), Kept: ckpt.BestKModels(), Last: ckpt.LastModelPath()})
}
