package tuner

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/report"
)

// TestLRCurveCSVReadsBack: report.ParseLRCurve reads WriteCSV's file back to
// the same numbers, suggestion and axis, for both sweep modes and a NaN loss.
func TestLRCurveCSVReadsBack(t *testing.T) {
	d := loadLinearData(t)
	for _, mode := range []string{Exponential, Linear} {
		t.Run(mode, func(t *testing.T) {
			res, err := LRFind(context.Background(), newTrainer(t, volt.Config{}), &linearModule{LR: 0.1, init: d}, d.loaders(),
				LRFindOptions{MinLR: 1e-4, MaxLR: 1, NumTraining: 30, Mode: mode, NoEarlyStop: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.SuggestedIndex < 0 {
				t.Fatal("no suggestion: the test needs one")
			}
			res.Losses[3] = math.NaN()
			var b bytes.Buffer
			if err := res.WriteCSV(&b); err != nil {
				t.Fatal(err)
			}
			c, err := report.ParseLRCurve(&b, "lr_find.csv")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.LRs, res.LRs) || c.Suggested != res.SuggestedIndex || c.LogLR != (mode == Exponential) {
				t.Errorf("read back %d rates, suggested %d, log axis %v; wrote %d, %d, mode %s", len(c.LRs), c.Suggested, c.LogLR, len(res.LRs), res.SuggestedIndex, mode)
			}
			for i := range c.Losses {
				if c.Losses[i] != res.Losses[i] && !(math.IsNaN(c.Losses[i]) && math.IsNaN(res.Losses[i])) {
					t.Errorf("loss %d read back %v, wrote %v", i, c.Losses[i], res.Losses[i])
				}
			}
		})
	}
}

// TestLRFinderSavesCurveForReport: the callback saves lr_find.csv in the
// run's log directory, which volt report then draws; with no logger it
// writes nothing.
func TestLRFinderSavesCurveForReport(t *testing.T) {
	d := loadLinearData(t)
	ctx := context.Background()
	opts := LRFindOptions{MinLR: 1e-4, MaxLR: 1, NumTraining: 30}
	root := t.TempDir()
	cb := &LRFinder{DataModule: d.loaders(), Options: opts}
	tr := testutil.Fit(t, volt.Config{MaxSteps: 2, LogEveryNSteps: 1, DefaultRootDir: root, DisableModelSummary: true, DisableCheckpointing: true, Callbacks: []volt.Callback{cb}},
		&loggingLinear{&linearModule{LR: 0.1, init: d}}, d.loaders())
	runs, _, err := report.Load([]string{tr.LogDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := runs[0].LRFind
	if c == nil {
		t.Fatalf("no learning-rate curve in %s (notes %q)", tr.LogDir(), runs[0].Notes)
	}
	if c.Suggested != cb.Result.SuggestedIndex || !reflect.DeepEqual(c.LRs, cb.Result.LRs) {
		t.Errorf("saved curve: suggestion %d of %d points, want %d of %d", c.Suggested, len(c.LRs), cb.Result.SuggestedIndex, len(cb.Result.LRs))
	}
	var page bytes.Buffer
	res, err := report.Render(&page, runs, report.Options{})
	if err != nil || res.LRCurves != 1 {
		t.Errorf("report: %v, %d curves, want 1", err, res.LRCurves)
	}

	quietRoot := t.TempDir()
	cb = &LRFinder{DataModule: d.loaders(), Options: opts}
	tr = newTrainer(t, volt.Config{MaxSteps: 2, DefaultRootDir: quietRoot, Callbacks: []volt.Callback{cb}})
	if err := tr.Fit(ctx, &linearModule{LR: 0.1, init: d}, d.loaders()); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(quietRoot, "*", report.LRFindFileName)); len(m) > 0 {
		t.Errorf("loggers off, yet the curve was written: %v", m)
	}
	if _, err := os.Stat(report.LRFindFileName); err == nil {
		t.Errorf("loggers off, yet %s was written in the working directory", report.LRFindFileName)
	}
}

// loggingLinear is linearModule logging its loss, so that the run has a
// metrics.csv (what makes a directory a run for volt report).
type loggingLinear struct{ *linearModule }

func (m loggingLinear) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.linearModule.TrainingStep(s, b)
	s.Log("train_loss", l)
	return l
}
