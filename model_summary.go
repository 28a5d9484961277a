package volt

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
)

// Summary describes a model's variables: one row per layer or scope (or
// variable) up to a depth, and the totals.
type Summary struct {
	Rows []SummaryRow
	// TrainableParams, NonTrainableParams and TotalParams count scalar
	// parameters (elements of the variables), as Lightning counts
	// PyTorch's parameters: trainable ones, frozen ones, all. Batch
	// normalization's running statistics (running_mean, running_var,
	// num_batches_tracked; GoMLX BatchNorm's mean, variance, avg_weight)
	// are PyTorch's buffers, not parameters, and count nowhere, as in
	// Lightning.
	TrainableParams, NonTrainableParams, TotalParams int64
	// SizeMB is the size of the parameters' values in megabytes (10^6
	// bytes), buffers left out as in Lightning.
	SizeMB float64
}

// SummaryRow is a layer, a scope or a single variable of the summary.
type SummaryRow struct {
	// Name is the path below the root without the leading "/", the scopes
	// GoMLX's layers add inside the one you give them left out: the dense
	// layer built in scope "hidden_0" is "hidden_0" (its variables
	// "hidden_0/weights", …), not "hidden_0/dense".
	Name string
	// Depth is the number of path elements in Name.
	Depth int
	// Type is the GoMLX layer the row holds ("Dense", "Conv", "LayerNorm",
	// "BatchNorm", "RMSNorm", "Embedding", …), "Variable" for a variable
	// and "Scope" for a scope of several layers or of other variables.
	Type string
	// Shape is the variable's dimensions, "" for a scope.
	Shape string
	// DType is the dtype shared by every variable in the row, or "mixed".
	DType string
	// Params counts scalar parameters; Trainable those that are trainable.
	Params, Trainable int64
}

// Mode is "trainable", "frozen" or, for a scope that holds both, "mixed".
func (r SummaryRow) Mode() string {
	switch r.Trainable {
	case r.Params:
		return "trainable"
	case 0:
		return "frozen"
	}
	return "mixed"
}

// layerScopes names the scope each GoMLX layer creates inside the one it is
// given, and the layer's type in the summary.
var layerScopes = map[string]string{
	"dense": "Dense", "conv": "Conv", "layer_normalization": "LayerNorm", "batch_normalization": "BatchNorm",
	"rms_norm": "RMSNorm", "dynamic_tanh": "DynamicTanh", "MultiHeadAttention": "MultiHeadAttention",
	"piece_wise_linear": "PieceWiseLinear",
}

// layerVariables names variables that make their scope a layer by
// themselves: layers.Embedding creates no scope of its own,
// and package batchnorm's layers (no scope of their own either).
var layerVariables = map[string]string{"embeddings": "Embedding", "running_mean": "BatchNorm"}

// bufferNames are the variables PyTorch keeps as buffers, not
// parameters: package batchnorm's running statistics (PyTorch's names).
var bufferNames = map[string]bool{"running_mean": true, "running_var": true, "num_batches_tracked": true}

// goMLXBatchNormBuffers are the running statistics of GoMLX's
// layers/norm.BatchNorm, inside its "batch_normalization" scope.
var goMLXBatchNormBuffers = map[string]bool{"mean": true, "variance": true, "avg_weight": true}

// isRunningStatistic reports whether the variable at path ("/a/b/name")
// is what PyTorch would keep as a buffer, not a parameter: batch
// normalization's running statistics — package batchnorm's running_mean,
// running_var and num_batches_tracked, and the mean, variance and
// avg_weight of GoMLX's norm.BatchNorm (scope "batch_normalization").
// They are state the forward pass updates, not weights an optimizer
// trains, so the model summary counts them in no parameter total, as
// Lightning leaves buffers out of its counts. A parameter frozen by the
// user (not trainable) is no buffer: it counts as non-trainable.
func isRunningStatistic(path string) bool {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	name := parts[len(parts)-1]
	if bufferNames[name] {
		return true
	}
	return len(parts) > 1 && parts[len(parts)-2] == "batch_normalization" && goMLXBatchNormBuffers[name]
}

// summaryPath is a variable's path as the summary shows it: its elements
// (the variable's name last) and the layer type of each scope element.
type summaryPath struct {
	parts []string
	types []string // types[i] is the type of scope parts[:i+1]; "" when not a layer
}

// summaryPaths folds each GoMLX layer scope into its parent when it is the
// parent's only child (hidden_0/dense/weights → hidden_0/weights, the
// "hidden_0" row a Dense); a layer scope at the root, or beside other
// children, keeps its name.
func summaryPaths(paths [][]string) []summaryPath {
	children := map[string]map[string]bool{}
	for _, parts := range paths {
		for i := range parts {
			parent := strings.Join(parts[:i], "/")
			if children[parent] == nil {
				children[parent] = map[string]bool{}
			}
			children[parent][parts[i]] = true
		}
	}
	out := make([]summaryPath, len(paths))
	for k, parts := range paths {
		var sp summaryPath
		for i, part := range parts {
			last := i == len(parts)-1
			kind, isLayer := layerScopes[part]
			parent := strings.Join(parts[:i], "/")
			if !last && isLayer && i > 0 && len(children[parent]) == 1 {
				sp.types[len(sp.types)-1] = kind // the parent is the layer
				continue
			}
			sp.parts = append(sp.parts, part)
			switch {
			case last:
				sp.types = append(sp.types, "Variable")
				if kind, ok := layerVariables[part]; ok && len(sp.types) > 1 {
					sp.types[len(sp.types)-2] = kind
				}
			case isLayer:
				sp.types = append(sp.types, kind)
			default:
				sp.types = append(sp.types, "")
			}
		}
		out[k] = sp
	}
	return out
}

// Summarize describes the variables of store, with rows for the layers,
// scopes and variables up to maxDepth levels below the root (-1: all, 0:
// totals only), named as summaryPaths folds them. volt's internal
// variables ("/volt/…") and GoMLX's RNG state are left out; buffers
// ([isRunningStatistic]) have no rows and count in no total, but their layer keeps
// its row (a BatchNorm without affine weights shows 0 parameters, as in
// Lightning).
func Summarize(store *model.Store, maxDepth int) Summary {
	var s Summary
	var vars []*model.Variable
	var paths [][]string
	for v := range store.IterVariables() {
		path := v.Path()
		if !engine.ModuleVariable(path) {
			continue
		}
		vars = append(vars, v)
		paths = append(paths, strings.Split(strings.TrimPrefix(path, "/"), "/"))
	}
	index := map[string]int{}
	var bytes int64
	for k, sp := range summaryPaths(paths) {
		v := vars[k]
		buffer := isRunningStatistic(v.Path())
		n := int64(v.Shape().Size())
		if buffer {
			n = 0
		}
		trainable := int64(0)
		if v.Trainable {
			trainable = n
		}
		s.TotalParams += n
		s.TrainableParams += trainable
		if !buffer {
			bytes += v.Shape().ByteSize()
		}
		for d := 1; d <= len(sp.parts) && (maxDepth < 0 || d <= maxDepth); d++ {
			if buffer && d == len(sp.parts) {
				break // the buffer's own row
			}
			name := strings.Join(sp.parts[:d], "/")
			i, ok := index[name]
			if !ok {
				i = len(s.Rows)
				index[name] = i
				typ := sp.types[d-1]
				if typ == "" {
					typ = "Scope"
				}
				s.Rows = append(s.Rows, SummaryRow{Name: name, Depth: d, Type: typ})
			}
			r := &s.Rows[i]
			if typ := sp.types[d-1]; typ != "" && r.Type == "Scope" {
				r.Type = typ // a later variable marks the scope a layer (running_mean: a BatchNorm)
			}
			if d == len(sp.parts) {
				r.Shape = fmt.Sprint(v.Shape().Dimensions)
			}
			if buffer {
				continue // no parameters, and its dtype (int64 count) is not the layer's
			}
			if r.DType == "" {
				r.DType = v.DType().String()
			} else if r.DType != v.DType().String() {
				r.DType = "mixed"
			}
			r.Params += n
			r.Trainable += trainable
		}
	}
	s.NonTrainableParams = s.TotalParams - s.TrainableParams
	s.SizeMB = float64(bytes) / 1e6
	return s
}

// String renders the summary as Lightning does: a table (Name, Type,
// Params, Mode, and volt's DType; a Shape column when variables have rows),
// then the totals. Lightning's In/Out sizes need an example input run
// through the layers, which GoMLX's graphs do not mark; like Lightning
// without one, the table leaves them out.
func (s Summary) String() string {
	withShape := false
	for _, r := range s.Rows {
		withShape = withShape || r.Shape != ""
	}
	header := []string{"", "Name", "Type", "Params", "Mode", "DType"}
	if withShape {
		header = append(header, "Shape")
	}
	rows := [][]string{header}
	for i, r := range s.Rows {
		row := []string{fmt.Sprint(i), r.Name, r.Type, humanCount(r.Params), r.Mode(), r.DType}
		if withShape {
			shape := r.Shape
			if shape == "" {
				shape = "-"
			}
			row = append(row, shape)
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(header))
	for _, row := range rows {
		for j, c := range row {
			widths[j] = max(widths[j], len(c))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = fmt.Sprintf("%-*s", widths[j], c)
		}
		b.WriteString(strings.TrimRight(strings.Join(cells, " | "), " ") + "\n")
	}
	rule := strings.Repeat("-", len(strings.Join(make([]string, len(header)), " | "))+sum(widths)) + "\n"
	line(header)
	b.WriteString(rule)
	for _, row := range rows[1:] {
		line(row)
	}
	b.WriteString(rule)
	fmt.Fprintf(&b, "%-10s Trainable params\n", humanCount(s.TrainableParams))
	fmt.Fprintf(&b, "%-10s Non-trainable params\n", humanCount(s.NonTrainableParams))
	fmt.Fprintf(&b, "%-10s Total params\n", humanCount(s.TotalParams))
	fmt.Fprintf(&b, "%-10.3f Total estimated model params size (MB)\n", s.SizeMB)
	return b.String()
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// humanCount writes a count as Lightning does: 999, 1.2 K, 3.4 M, 5.6 B, 7.8 T.
func humanCount(n int64) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	f := float64(n)
	for _, unit := range []string{"K", "M", "B", "T"} {
		f /= 1000
		if f < 1000 || unit == "T" {
			return fmt.Sprintf("%.1f %s", f, unit)
		}
	}
	return fmt.Sprint(n)
}

// ModelSummarizer is implemented by callbacks that print the model summary
// themselves (callback.ModelSummary): the trainer's default one is off then.
type ModelSummarizer interface {
	ManagesModelSummary()
}

// printSummary prints the default model summary (depth 1) once per Fit,
// unless Config.DisableModelSummary or a ModelSummarizer callback says
// otherwise.
func (t *Trainer) printSummary() {
	if t.cfg.DisableModelSummary || t.eng == nil {
		return
	}
	if t.hooks.has(hookModelSummarizer) {
		return
	}
	s := Summarize(t.eng.Store, 1)
	if len(s.Rows) == 0 {
		return
	}
	w := t.cfg.SummaryWriter
	if w == nil {
		w = os.Stderr
	}
	_, _ = io.WriteString(w, s.String())
}
