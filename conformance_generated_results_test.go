package volt_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// What a generated scenario ends with, beyond its hooks and rows (version
// 5): each stage's result (Validate's and Test's metrics, Predict's
// outputs) and callback metrics, the layer's final weights, and the
// checkpoint a resume started from.

// genStageResult is one stage of a scenario as gen_scenarios.py records it
// (stage_results): its result and the callback metrics after it (also after
// a failed stage).
type genStageResult struct {
	Stage           string
	Metrics         []map[string]float64 // validate, test: one map per loader
	Predictions     [][]float64          // predict: per loader, every output value in order
	CallbackMetrics map[string]float64
	// ProgressBarMetrics (version 6) are trainer.progress_bar_metrics after
	// the stage.
	ProgressBarMetrics map[string]float64
}

// UnmarshalJSON implements json.Unmarshaler: "result" is a list of metric
// maps (validate, test), of per-loader values (predict) or null.
func (r *genStageResult) UnmarshalJSON(b []byte) error {
	var raw struct {
		Stage           string                `json:"stage"`
		Result          json.RawMessage       `json:"result"`
		CallbackMetrics map[string]traceFloat `json:"callback_metrics"`
		ProgressBar     map[string]traceFloat `json:"progress_bar_metrics"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	r.Stage, r.CallbackMetrics, r.ProgressBarMetrics = raw.Stage, traceMetrics(raw.CallbackMetrics), traceMetrics(raw.ProgressBar)
	switch raw.Stage {
	case "validate", "test":
		var ms []map[string]traceFloat
		if err := json.Unmarshal(raw.Result, &ms); err != nil {
			return fmt.Errorf("stage %s result: %w", raw.Stage, err)
		}
		for _, m := range ms {
			r.Metrics = append(r.Metrics, traceMetrics(m))
		}
	case "predict":
		var ps [][]traceFloat
		if err := json.Unmarshal(raw.Result, &ps); err != nil {
			return fmt.Errorf("stage predict result: %w", err)
		}
		for _, p := range ps {
			vs := make([]float64, len(p))
			for i, v := range p {
				vs[i] = float64(v)
			}
			r.Predictions = append(r.Predictions, vs)
		}
	}
	return nil
}

// genWeightsTrace is a trace's "weights": the layer's at the end.
type genWeightsTrace struct {
	Weight []traceFloat `json:"weight"`
	Bias   []traceFloat `json:"bias"`
}

func (w *genWeightsTrace) values() []float64 {
	var out []float64
	for _, v := range append(slices.Clone(w.Weight), w.Bias...) {
		out = append(out, float64(v))
	}
	return out
}

// genResumedFrom is the save a resume started from: its index in the
// events and the file it wrote.
type genResumedFrom struct {
	Event int    `json:"event"`
	File  string `json:"file"`
}

// genLoaders builds the spec's loaders: version 5's data, or 16 or 20
// training examples and 8 validation examples per loader in batches of 4;
// the training loader reads through a seeded RandomSampler where version
// 6's shuffle_seed says.
func genLoaders(sp genSpec, init *conformanceData) volt.Loaders {
	l := genPlainLoaders(sp, init)
	if s := sp.ShuffleSeed; s != nil {
		train := l.Train.(*data.DataLoader)
		train.Sampler = data.RandomSampler{Seed: s}
	}
	return l
}

// genPlainLoaders is genLoaders without the sampler.
func genPlainLoaders(sp genSpec, init *conformanceData) volt.Loaders {
	first := func(d xy, n int) data.Slice { return d.slice()[:n] }
	var train data.Loader
	var val []data.Loader
	if d := sp.Data; d != nil {
		train = &data.DataLoader{Dataset: first(init.Train20, d.NTrain), BatchSize: d.Batch, DropLast: d.DropLast}
		for _, n := range d.Val {
			val = append(val, &data.DataLoader{Dataset: first(init.Val8, n), BatchSize: d.ValBatch})
		}
	} else {
		set := init.Train16
		if sp.NTrain == 20 {
			set = init.Train20
		}
		train = &data.DataLoader{Dataset: set.slice(), BatchSize: 4}
		for range max(sp.NValLoaders, 1) {
			val = append(val, &data.DataLoader{Dataset: init.Val8.slice(), BatchSize: 4})
		}
	}
	return volt.Loaders{Train: train, Val: val, Test: val, Predict: val}
}

// flatPredictions is Predict's result as gen_scenarios.py records it: per
// loader, every output value in order.
func flatPredictions(preds [][]*tensors.Tensor) ([][]float64, error) {
	out := make([][]float64, len(preds))
	for i, batches := range preds {
		rows, err := volt.PredictionRows(batches)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			for _, v := range r {
				out[i] = append(out[i], float64(v))
			}
		}
	}
	return out, nil
}

// genWeights returns the layer's weights and bias at the end of a scenario:
// those of the last of its trainers that built the layer (a trainer holds
// the weights in its store), or the initial ones where none did.
func genWeights(trainers []*volt.Trainer, init *conformanceData) ([]float64, error) {
	for i := len(trainers) - 1; i >= 0; i-- {
		store := trainers[i].Store()
		if store == nil || store.GetVariable("/layer/weight") == nil {
			continue
		}
		var out []float64
		for _, name := range []string{"/layer/weight", "/layer/bias"} {
			v := store.GetVariable(name)
			if v == nil {
				return nil, fmt.Errorf("no variable %s in the trainer's store", name)
			}
			t, err := v.Value()
			if err != nil {
				return nil, fmt.Errorf("variable %s: %w", name, err)
			}
			vs, err := tensors.CopyFlatData[float32](t)
			if err != nil {
				return nil, fmt.Errorf("variable %s: %w", name, err)
			}
			for _, x := range vs {
				out = append(out, float64(x))
			}
		}
		return out, nil
	}
	var out []float64
	for _, v := range append(slices.Clone(init.Weight), init.Bias...) {
		out = append(out, float64(v))
	}
	return out, nil
}

var versionedName = regexp.MustCompile(`-v[0-9]+\.ckpt$`)

// normCheckpointName is gen_scenarios.py's norm_name: a checkpoint name as
// both sides compare it, "/" as "_" (volt) and without -vN (volt keeps a
// file per save where Lightning overwrites).
func normCheckpointName(f string) string {
	return versionedName.ReplaceAllString(strings.ReplaceAll(f, "/", "_"), ".ckpt")
}

// resumeCandidates is gen_scenarios.py's resume_candidates: the saves a
// resume may start from by name (not last.ckpt, the file still there, no
// later save of the same name).
func resumeCandidates(saves []genResumedFrom, exists func(file string) bool) []genResumedFrom {
	var out []genResumedFrom
	for i, s := range saves {
		later := slices.ContainsFunc(saves[i+1:], func(l genResumedFrom) bool {
			return normCheckpointName(l.File) == normCheckpointName(s.File)
		})
		if s.File != "last.ckpt" && exists(s.File) && !later {
			out = append(out, s)
		}
	}
	return out
}

// resumeChoice is the save a resume stage starts from (nil: none, a fresh
// run), chosen among the saves in events as gen_scenarios.py's record does.
func resumeChoice(sp genSpec, events []traceEvent, dir string) *genResumedFrom {
	var saves []genResumedFrom
	for i, e := range events {
		if e.Who == "ModelCheckpoint" {
			saves = append(saves, genResumedFrom{i, e.File})
		}
	}
	exists := func(f string) bool { return fileExists(dir + "/" + f) }
	f, named := sp.resumeSave()
	if !named {
		if !exists("last.ckpt") {
			return nil
		}
		last := genResumedFrom{-1, "last.ckpt"}
		for _, s := range saves {
			if s.File == "last.ckpt" {
				last = s
			}
		}
		return &last
	}
	c := resumeCandidates(saves, exists)
	if len(c) == 0 {
		return nil
	}
	return &c[min(int(f*float64(len(c))), len(c)-1)]
}

// compareResumedFrom compares the checkpoints the resumes started from.
func compareResumedFrom(want, got *genResumedFrom) string {
	name := func(r *genResumedFrom) string {
		if r == nil {
			return "(none)"
		}
		return normCheckpointName(r.File)
	}
	if !sameFile(name(want), name(got)) { // a metric in the name within rounding
		return fmt.Sprintf("lightning resumed from %s, volt from %s", name(want), name(got))
	}
	return ""
}

// compareWeights compares the final weights within rounding.
func compareWeights(want *genWeightsTrace, got []float64) string {
	if want == nil {
		return ""
	}
	w := want.values()
	if len(w) != len(got) {
		return fmt.Sprintf("lightning %d values, volt %d", len(w), len(got))
	}
	for i := range w {
		if !near(w[i], got[i]) {
			return fmt.Sprintf("value %d: lightning %v, volt %v (lightning %v, volt %v)", i, w[i], got[i], w, got)
		}
	}
	return ""
}

// stageComparison is what compareStageResults found: the first difference
// in the stages' results and in their callback metrics ("" if none), and
// the designed differences it set aside.
type stageComparison struct {
	result, metrics string
	// progressBar is the first difference in the progress bar metrics
	// after a stage (version 6's traces), compared as the callback metrics.
	progressBar string
	// restored: volt's callback metrics of a resumed Fit held values
	// Lightning's lacked (designed: it starts with the checkpoint's).
	restored bool
	// atFailure: the callback metrics after a failed run differed
	// (designed: volt's hold every value logged until the failure,
	// Lightning's those its loops last published).
	atFailure bool
}

// compareStageResults compares the stages' results and the callback
// metrics after each. In a resumed Fit, volt's callback metrics that
// Lightning's lack are dropped first; after the stage that failed (failed:
// Lightning's run ended in an error), the callback metrics are not compared.
func compareStageResults(want, got []genStageResult, failed bool) stageComparison {
	var c stageComparison
	for i := range max(len(want), len(got)) {
		if i >= len(want) || i >= len(got) {
			c.result = fmt.Sprintf("lightning ran %d stages, volt %d", len(want), len(got))
			return c
		}
		w, g := want[i], got[i]
		if w.Stage != g.Stage {
			c.result = fmt.Sprintf("stage %d: lightning %s, volt %s", i, w.Stage, g.Stage)
			return c
		}
		if c.result == "" {
			c.result = compareStageResult(i, w, g)
		}
		gm, gp := g.CallbackMetrics, g.ProgressBarMetrics
		if w.Stage == "resume" {
			gm, gp = map[string]float64{}, map[string]float64{}
			for k, v := range g.CallbackMetrics {
				if _, ok := w.CallbackMetrics[k]; ok {
					gm[k] = v
				} else {
					c.restored = true
				}
			}
			for k, v := range g.ProgressBarMetrics {
				if _, ok := w.ProgressBarMetrics[k]; ok {
					gp[k] = v
				}
			}
		}
		if c.progressBar == "" && !nearMetrics(w.ProgressBarMetrics, gp) && (!failed || i < len(want)-1) {
			c.progressBar = fmt.Sprintf("after stage %d (%s): lightning {%s}, volt {%s}", i, w.Stage,
				formatRow(loggedRow{Metrics: w.ProgressBarMetrics}), formatRow(loggedRow{Metrics: gp}))
		}
		if c.metrics != "" || nearMetrics(w.CallbackMetrics, gm) {
			continue
		}
		if failed && i == len(want)-1 {
			c.atFailure = true
			continue
		}
		c.metrics = fmt.Sprintf("after stage %d (%s): lightning {%s}, volt {%s}", i, w.Stage,
			formatRow(loggedRow{Metrics: w.CallbackMetrics}), formatRow(loggedRow{Metrics: gm}))
	}
	return c
}

func compareStageResult(i int, w, g genStageResult) string {
	where := fmt.Sprintf("stage %d (%s)", i, w.Stage)
	if len(w.Metrics) != len(g.Metrics) || len(w.Predictions) != len(g.Predictions) {
		return fmt.Sprintf("%s: lightning %d results, volt %d", where, len(w.Metrics)+len(w.Predictions), len(g.Metrics)+len(g.Predictions))
	}
	for j := range w.Metrics {
		if !nearMetrics(w.Metrics[j], g.Metrics[j]) {
			return fmt.Sprintf("%s loader %d: lightning %s, volt %s", where, j,
				formatRow(loggedRow{Metrics: w.Metrics[j]}), formatRow(loggedRow{Metrics: g.Metrics[j]}))
		}
	}
	for j := range w.Predictions {
		wp, gp := w.Predictions[j], g.Predictions[j]
		if len(wp) != len(gp) {
			return fmt.Sprintf("%s loader %d: lightning %d outputs, volt %d", where, j, len(wp), len(gp))
		}
		for k := range wp {
			if !near(wp[k], gp[k]) {
				return fmt.Sprintf("%s loader %d output %d: lightning %v, volt %v", where, j, k, wp[k], gp[k])
			}
		}
	}
	return ""
}
