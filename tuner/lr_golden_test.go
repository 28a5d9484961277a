package tuner

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/voltml/volt"
)

// lrGolden is testdata/lr_find.json, written by testdata/gen_lr_find.py with
// Lightning 2.2.5's Tuner.lr_find and _LRFinder.suggestion.
type lrGolden struct {
	Sweeps []struct {
		Mode           string     `json:"mode"`
		MinLR          float64    `json:"min_lr"`
		MaxLR          float64    `json:"max_lr"`
		NumTraining    int        `json:"num_training"`
		Threshold      *float64   `json:"early_stop_threshold"`
		Accumulate     int        `json:"accumulate_grad_batches"`
		LR             []float64  `json:"lr"`
		Loss           []*float64 `json:"loss"`
		Suggestion     *float64   `json:"suggestion"`
		SuggestedIndex *int       `json:"suggestion_index"`
	} `json:"sweeps"`
	Curves []struct {
		Name           string    `json:"name"`
		Loss           []any     `json:"loss"` // numbers, or "nan"
		SkipBegin      int       `json:"skip_begin"`
		SkipEnd        int       `json:"skip_end"`
		SuggestedIndex *int      `json:"suggestion_index"`
		LR             []float64 `json:"lr"`
	} `json:"curves"`
}

func loadLRGolden(t *testing.T) *lrGolden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "lr_find.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g lrGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("testdata/lr_find.json: %v", err)
	}
	return &g
}

// TestSuggestMatchesLightning feeds Lightning's fixed loss curves to Suggest.
func TestSuggestMatchesLightning(t *testing.T) {
	g := loadLRGolden(t)
	if len(g.Curves) == 0 {
		t.Fatal("testdata/lr_find.json has no curves")
	}
	for _, c := range g.Curves {
		t.Run(c.Name, func(t *testing.T) {
			losses := make([]float64, len(c.Loss))
			for i, v := range c.Loss {
				switch v := v.(type) {
				case float64:
					losses[i] = v
				case string:
					f, err := strconv.ParseFloat(v, 64)
					if err != nil {
						t.Fatalf("loss %d: %q", i, v)
					}
					losses[i] = f
				}
			}
			idx, ok := Suggest(losses, c.SkipBegin, c.SkipEnd)
			switch {
			case c.SuggestedIndex == nil && ok:
				t.Fatalf("Suggest = %d, Lightning has no suggestion", idx)
			case c.SuggestedIndex != nil && !ok:
				t.Fatalf("Suggest found none, Lightning suggests index %d", *c.SuggestedIndex)
			case ok && idx != *c.SuggestedIndex:
				t.Fatalf("Suggest = %d, Lightning %d", idx, *c.SuggestedIndex)
			}
		})
	}
}

// TestLRFindMatchesLightning runs the sweeps gen_lr_find.py ran with
// Lightning on the same Linear(4, 1), data and initial weights: the same
// learning rates (bitwise), the same number of steps (early stop included),
// the same losses to float32 precision and the same suggestion.
func TestLRFindMatchesLightning(t *testing.T) {
	g := loadLRGolden(t)
	d := loadLinearData(t)
	for _, s := range g.Sweeps {
		t.Run(s.Mode+"_"+strconv.Itoa(s.NumTraining)+"_accumulate_"+strconv.Itoa(s.Accumulate), func(t *testing.T) {
			opts := LRFindOptions{MinLR: s.MinLR, MaxLR: s.MaxLR, NumTraining: s.NumTraining, Mode: s.Mode}
			if s.Threshold == nil {
				opts.NoEarlyStop = true
			} else {
				opts.EarlyStopThreshold = *s.Threshold
			}
			tr := newTrainer(t, volt.Config{AccumulateGradBatches: s.Accumulate})
			res, err := LRFind(context.Background(), tr, &linearModule{LR: 0.1, init: d}, d.loaders(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.LRs) != len(s.LR) || len(res.Losses) != len(s.Loss) {
				t.Fatalf("%d lrs and %d losses, Lightning %d and %d", len(res.LRs), len(res.Losses), len(s.LR), len(s.Loss))
			}
			for i := range s.LR {
				if res.LRs[i] != s.LR[i] {
					t.Errorf("lr[%d]: %s", i, describeDiff(res.LRs[i], s.LR[i]))
				}
				want := math.NaN()
				if s.Loss[i] != nil {
					want = *s.Loss[i]
				}
				if !(math.Abs(res.Losses[i]-want) <= 1e-5*math.Abs(want)) && !(math.IsNaN(want) && math.IsNaN(res.Losses[i])) {
					t.Errorf("loss[%d]: %s", i, describeDiff(res.Losses[i], want))
				}
			}
			wantStop := len(s.LR) < s.NumTraining
			if res.StoppedEarly != wantStop {
				t.Errorf("StoppedEarly = %v, Lightning ran %d of %d steps", res.StoppedEarly, len(s.LR), s.NumTraining)
			}
			switch {
			case s.SuggestedIndex == nil:
				if res.SuggestedIndex != -1 {
					t.Errorf("suggested index %d, Lightning none", res.SuggestedIndex)
				}
			case res.SuggestedIndex != *s.SuggestedIndex || res.SuggestedLR != *s.Suggestion:
				t.Errorf("suggestion %d (%v), Lightning %d (%v)", res.SuggestedIndex, res.SuggestedLR, *s.SuggestedIndex, *s.Suggestion)
			}
		})
	}
}
