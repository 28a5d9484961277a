package volt_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// plateauOnInf is the boring model at LR 1e-5 with a ReduceLROnPlateau on
// inf_metric, whose best stays +Inf.
type plateauOnInf struct{ boring }

func (m *plateauOnInf) ConfigureOptimizers() volt.Optimizers {
	s := optim.NewReduceLROnPlateau(optim.PlateauMin)
	return volt.Optimizers{{Optimizer: optim.SGD(1e-5), Scheduler: s, Monitor: "inf_metric"}}
}

// spellingCallbacks are the stateful callbacks of the run that wrote the
// checkpoint: EarlyStopping with a finite, a +Inf and a -Inf best score,
// ModelCheckpoints scoring finite values, +Inf and NaN (kept as -Inf in max
// mode), all saving under the relative directory ckpts.
func spellingCallbacks(t *testing.T) []volt.Callback {
	t.Helper()
	no := volt.Ptr(false)
	var cbs []volt.Callback
	for _, c := range []callback.EarlyStoppingConfig{
		{Monitor: "val_loss", Patience: 100},
		{Monitor: "inf_metric", Patience: 100, CheckFinite: no},
		{Monitor: "ninf_metric", Mode: "max", Patience: 100, CheckFinite: no},
		{Monitor: "small_metric", Patience: 100},
	} {
		es := callback.NewEarlyStopping(c)
		cbs = append(cbs, es)
	}
	for _, c := range []callback.ModelCheckpointConfig{
		{Monitor: "val_loss", SaveTopK: volt.Ptr(2), Filename: "val-{epoch}"},
		{Monitor: "inf_metric", SaveTopK: volt.Ptr(2), Filename: "inf-{epoch}"},
		{Monitor: "nan_metric", Mode: "max", SaveTopK: volt.Ptr(1), Filename: "nan-{epoch}"},
	} {
		c.Dirpath = "ckpts"
		mc := callback.NewModelCheckpoint(c)
		cbs = append(cbs, mc)
	}
	return cbs
}

// TestLoadsOldFloatSpellings: a checkpoint written by volt 0.1.0, whose
// floats are spelled three ways (metric state 1e-05, the schedulers'
// 0.00001, the callbacks' scores always quoted, "NaN" and "±Inf" in all),
// loads: a Fit resumed from it restores the same metric values, callback
// scores and scheduler state, and a checkpoint saved at once holds the same
// values, compared as numbers, in the one spelling volt writes now.
//
// The file was written at commit 5c06914 by TestWriteFloatSpellingsCheckpoint
// (a Fit of plateauOnInf for 2 epochs with spellingCallbacks and
// logsSpellings, then SaveCheckpoint); that writer went with the spellings
// it wrote, so the file is not to be regenerated.
func TestLoadsOldFloatSpellings(t *testing.T) {
	old, err := filepath.Abs("testdata/float_spellings/v0.1.0.ckpt")
	if err != nil {
		t.Fatal(err)
	}
	oldState := checkpointState(t, old)
	for _, spelling := range []string{`"NaN"`, `"+Inf"`, `"-Inf"`, `1e-05`, `1.234567e+06`, `0.00001`, `"1e-05"`, `"22.050918579101562"`} {
		if !strings.Contains(flatJSON(t, oldState), spelling) {
			t.Fatalf("the old checkpoint holds no %s: it does not test that spelling", spelling)
		}
	}
	t.Chdir(t.TempDir()) // the ModelCheckpoints' directory ckpts is relative
	cbs := spellingCallbacks(t)
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2, Callbacks: cbs}), &plateauOnInf{}, boringData(), volt.FromCheckpoint(old))
	m := tr.CallbackMetrics()
	for k, want := range map[string]float64{"nan_metric": math.NaN(), "inf_metric": math.Inf(1), "ninf_metric": math.Inf(-1), "small_metric": 1e-5, "big_metric": 1234567} {
		if got := m[k]; !sameFloat(got, want) {
			t.Errorf("restored %s = %v, want %v", k, got, want)
		}
	}
	for i, want := range []float64{22.050918579101562, math.Inf(1), math.Inf(-1), 1e-5} {
		if got := cbs[i].(*callback.EarlyStopping).BestScore(); !sameFloat(got, want) {
			t.Errorf("%s: restored best score %v, want %v", cbs[i].(volt.Stateful).StateKey(), got, want)
		}
	}
	resaved := filepath.Join(t.TempDir(), "resaved.ckpt")
	if err := tr.SaveCheckpoint(resaved, false); err != nil {
		t.Fatal(err)
	}
	now := checkpointState(t, resaved)
	for _, spelling := range []string{`1e-05`, `1.234567e+06`, `"22.050918579101562"`} {
		if strings.Contains(flatJSON(t, now), spelling) {
			t.Errorf("the checkpoint saved now still spells a value %s", spelling)
		}
	}
	// The resumed Fit, with no epoch left, records the stage it reached.
	delete(oldState["progress"].(map[string]any), "stage")
	delete(now["progress"].(map[string]any), "stage")
	// The old file predates batches_stepped: it is read as one batch per
	// optimizer step, and saved.
	p := now["progress"].(map[string]any)
	if p["batches_stepped"] != p["optimizer_steps"] {
		t.Errorf("resaved batches_stepped %v, want the old file's optimizer_steps %v", p["batches_stepped"], p["optimizer_steps"])
	}
	delete(p, "batches_stepped")
	sameValues(t, "state", oldState, now)
}

// checkpointState returns the trainer state of the checkpoint at path, with
// the callbacks' and schedulers' states (bytes, base64 in JSON) decoded.
func checkpointState(t *testing.T, path string) map[string]any {
	t.Helper()
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Callbacks  map[string][]byte `json:"callbacks"`
		Schedulers [][]byte          `json:"schedulers"`
	}
	if err := json.Unmarshal(f.State, &st); err != nil {
		t.Fatal(err)
	}
	all := decodeNumbers(t, f.State).(map[string]any)
	cbs := map[string]any{}
	for k, b := range st.Callbacks {
		cbs[k] = decodeNumbers(t, b)
	}
	var scheds []any
	for _, b := range st.Schedulers {
		scheds = append(scheds, decodeNumbers(t, b))
	}
	all["callbacks"], all["schedulers"] = cbs, scheds
	return all
}

func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

func flatJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameValues compares two decoded JSON trees: the same keys and shapes, and
// at each leaf the same value, where a number and a string holding a number
// ("1e-05", "NaN", "+Inf", "-Inf") are compared as float64s.
func sameValues(t *testing.T, at string, a, b any) {
	t.Helper()
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			t.Errorf("%s: %s, now %s", at, flatJSON(t, a), flatJSON(t, b))
			return
		}
		for k, v := range a {
			sameValues(t, at+"."+k, v, bm[k])
		}
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			t.Errorf("%s: %s, now %s", at, flatJSON(t, a), flatJSON(t, b))
			return
		}
		for i := range a {
			sameValues(t, fmt.Sprintf("%s[%d]", at, i), a[i], bs[i])
		}
	default:
		if a == b {
			return
		}
		fa, okA := leafFloat(a)
		fb, okB := leafFloat(b)
		if !okA || !okB || !sameFloat(fa, fb) {
			t.Errorf("%s: %v, now %v", at, a, b)
		}
	}
}

// leafFloat reads a JSON number, or a string holding a number, "NaN",
// "+Inf" or "-Inf", with strconv (not volt's reader).
func leafFloat(v any) (float64, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = string(v)
	case string:
		s = v
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
