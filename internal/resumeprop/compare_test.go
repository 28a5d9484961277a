package resumeprop

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/voltml/volt/checkpoint"
)

// A diff is one way the interrupted run's history differs from the
// uninterrupted one's.
type diff struct {
	kind   string // one of the diff kinds below
	where  string // a checkpoint file, tensor, state field or row index
	detail string
}

// The kinds of difference.
const (
	diffCkptFiles   = "checkpoint files"  // a file exists in one run only
	diffTensor      = "tensor"            // a checkpoint tensor's bytes, dtype or shape
	diffState       = "trainer state"     // a field of a checkpoint's trainer-state JSON
	diffRowsMissing = "rows missing"      // logged rows of the uninterrupted run absent from the resumed history
	diffRowsExtra   = "rows extra"        // rows the uninterrupted run did not log
	diffRowsTwice   = "rows duplicated"   // rows of the uninterrupted run the resumed history holds more often
	diffRowsOrder   = "rows out of order" // the same rows, in another order
	diffVersion     = "volt version"
)

func (d diff) String() string { return d.kind + " " + d.where + ": " + d.detail }

// stateExemptions are the trainer-state fields that legitimately differ
// between an uninterrupted run and an interrupted, resumed one, after
// every absolute path under a run's root is replaced by "<root>" (the runs
// have different roots). Each names why.
var stateExemptions = map[string]string{}

// tensorBoardFileName matches the state field naming a logger's TensorBoard
// event file, whose name holds the time and host it was created at: the
// uninterrupted and the resumed run each created their own (the resumed run
// continues the file its checkpoint names; the position in it is compared).
var tensorBoardFileName = regexp.MustCompile(`^logs\.[0-9]+\.position\.file$`)

// exempt reports whether field k of a trainer state may differ.
func exempt(k, want, got string) bool {
	if _, ok := stateExemptions[k]; ok {
		return true
	}
	return tensorBoardFileName.MatchString(k) && strings.Contains(want, "events.out.tfevents") && strings.Contains(got, "events.out.tfevents")
}

// compareHistories returns every difference of got (the interrupted and
// resumed run under gotRoot) from want (the uninterrupted one under
// wantRoot).
func compareHistories(want, got *history, wantRoot, gotRoot string) []diff {
	var out []diff
	wantNames, gotNames := slices.Sorted(maps.Keys(want.ckpts)), slices.Sorted(maps.Keys(got.ckpts))
	for _, name := range wantNames {
		g, ok := got.ckpts[name]
		if !ok {
			out = append(out, diff{diffCkptFiles, name, "missing in the resumed run"})
			continue
		}
		out = append(out, compareCkpt(name, want.ckpts[name], g, wantRoot, gotRoot)...)
	}
	for _, name := range gotNames {
		if _, ok := want.ckpts[name]; !ok {
			out = append(out, diff{diffCkptFiles, name, "only in the resumed run"})
		}
	}
	out = append(out, compareRows("csv", want.csv, got.csv)...)
	out = append(out, compareRows("tensorboard", want.tb, got.tb)...)
	return out
}

// compareCkpt compares two checkpoint files: tensors bitwise, the trainer
// state field by field (callback and scheduler states decoded).
func compareCkpt(name string, want, got *checkpoint.File, wantRoot, gotRoot string) []diff {
	var out []diff
	if want.VoltVersion != got.VoltVersion {
		out = append(out, diff{diffVersion, name, want.VoltVersion + " vs " + got.VoltVersion})
	}
	wt, gt := map[string]checkpoint.Tensor{}, map[string]checkpoint.Tensor{}
	for _, t := range want.Tensors {
		wt[t.Name] = t
	}
	for _, t := range got.Tensors {
		gt[t.Name] = t
	}
	for _, n := range slices.Sorted(maps.Keys(wt)) {
		w, g := wt[n], gt[n]
		switch {
		case g.Name == "":
			out = append(out, diff{diffTensor, name + " " + n, "missing in the resumed run"})
		case w.DType != g.DType || !slices.Equal(w.Shape, g.Shape):
			out = append(out, diff{diffTensor, name + " " + n, fmt.Sprintf("%s%v vs %s%v", w.DType, w.Shape, g.DType, g.Shape)})
		case !bytes.Equal(w.Data, g.Data):
			out = append(out, diff{diffTensor, name + " " + n, "bytes differ"})
		}
	}
	for _, n := range slices.Sorted(maps.Keys(gt)) {
		if _, ok := wt[n]; !ok {
			out = append(out, diff{diffTensor, name + " " + n, "only in the resumed run"})
		}
	}
	ws, err1 := flatState(want.State, wantRoot)
	gs, err2 := flatState(got.State, gotRoot)
	if err := errorsJoin(err1, err2); err != nil {
		return append(out, diff{diffState, name, err.Error()})
	}
	for _, k := range slices.Sorted(maps.Keys(union(ws, gs))) {
		if exempt(k, ws[k], gs[k]) {
			continue
		}
		if ws[k] != gs[k] {
			out = append(out, diff{diffState, name + " " + k, fmt.Sprintf("%s vs %s", orNone(ws[k]), orNone(gs[k]))})
		}
	}
	return out
}

// flatState flattens a trainer state into path → JSON leaf, decoding the
// base64 JSON of callback and scheduler states and replacing root by
// "<root>".
func flatState(raw json.RawMessage, root string) (map[string]string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	out := map[string]string{}
	flatten(out, "", v, root)
	return out, nil
}

func flatten(out map[string]string, path string, v any, root string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(out, join(path, k), e, root)
		}
	case []any:
		for i, e := range x {
			name := fmt.Sprint(i)
			if m, ok := e.(map[string]any); ok {
				if k, ok := m["key"].(string); ok {
					name = k // train_metrics entries by their metric's name
				}
			}
			flatten(out, join(path, name), e, root)
		}
	case string:
		if inner, ok := decodedJSON(x); ok {
			flatten(out, path, inner, root)
			return
		}
		out[path] = strings.ReplaceAll(x, root, "<root>")
	default:
		b, _ := json.Marshal(x)
		out[path] = string(b)
	}
}

// decodedJSON decodes s when it is base64 of a JSON object or array.
func decodedJSON(s string) (any, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		return nil, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func errorsJoin(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// compareRows compares two logged histories: the same rows, each exactly
// once, in the same order.
func compareRows(logger string, want, got []string) []diff {
	if slices.Equal(want, got) {
		return nil
	}
	count := map[string]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	wanted := map[string]bool{}
	for _, r := range want {
		wanted[r] = true
	}
	var missing, extra, twice []string
	for _, r := range sortedKeys(count) {
		for n := count[r]; n > 0; n-- {
			missing = append(missing, r)
		}
		for n := count[r]; n < 0; n++ {
			if wanted[r] {
				twice = append(twice, r)
			} else {
				extra = append(extra, r)
			}
		}
	}
	var out []diff
	if len(missing) > 0 {
		out = append(out, diff{diffRowsMissing, logger, fmt.Sprintf("%d of %d, e.g. %s", len(missing), len(want), sample(missing))})
	}
	if len(extra) > 0 {
		out = append(out, diff{diffRowsExtra, logger, fmt.Sprintf("%d (resumed history %d rows), e.g. %s", len(extra), len(got), sample(extra))})
	}
	if len(twice) > 0 {
		out = append(out, diff{diffRowsTwice, logger, fmt.Sprintf("%d (resumed history %d rows), e.g. %s", len(twice), len(got), sample(twice))})
	}
	if len(missing) == 0 && len(extra) == 0 && len(twice) == 0 {
		i := 0
		for i < len(want) && want[i] == got[i] {
			i++
		}
		out = append(out, diff{diffRowsOrder, logger, fmt.Sprintf("first at row %d: %s vs %s", i, want[i], got[i])})
	}
	return out
}

func sortedKeys(m map[string]int) []string {
	ks := slices.Collect(maps.Keys(m))
	sort.Strings(ks)
	return ks
}

// sample shows up to 3 rows.
func sample(rows []string) string {
	if len(rows) > 3 {
		return fmt.Sprintf("%q …", rows[:3])
	}
	return fmt.Sprintf("%q", rows)
}
