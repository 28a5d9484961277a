package volt

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gomlx/gomlx/ml/model"
)

// Summary describes a model's variables: one row per scope (or variable) up
// to a depth, and the totals.
type Summary struct {
	Rows []SummaryRow
	// TrainableParams, NonTrainableParams and TotalParams count scalar
	// parameters (elements of the variables).
	TrainableParams, NonTrainableParams, TotalParams int64
	// SizeMB is the size of the variables' values in megabytes (10^6 bytes).
	SizeMB float64
}

// SummaryRow is a scope, or a single variable, of the summary.
type SummaryRow struct {
	// Name is the path below the root without the leading "/", e.g. "dense"
	// or "dense/weights".
	Name string
	// Depth is the number of path elements in Name.
	Depth int
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

// Summarize describes the variables of store, with rows for the scopes and
// variables up to maxDepth levels below the root (-1: all, 0: totals only).
// volt's internal variables ("/volt/…") and GoMLX's RNG state are left out.
func Summarize(store *model.Store, maxDepth int) Summary {
	var s Summary
	index := map[string]int{}
	var bytes int64
	for v := range store.IterVariables() {
		path := v.Path()
		if strings.HasPrefix(path, internalPrefix) || v.Name() == model.RNGStateVariableName {
			continue
		}
		n := int64(v.Shape().Size())
		trainable := int64(0)
		if v.Trainable {
			trainable = n
		}
		s.TotalParams += n
		s.TrainableParams += trainable
		bytes += v.Shape().ByteSize()
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for d := 1; d <= len(parts) && (maxDepth < 0 || d <= maxDepth); d++ {
			name := strings.Join(parts[:d], "/")
			i, ok := index[name]
			if !ok {
				i = len(s.Rows)
				index[name] = i
				s.Rows = append(s.Rows, SummaryRow{Name: name, Depth: d, DType: v.DType().String()})
			}
			r := &s.Rows[i]
			if d == len(parts) {
				r.Shape = fmt.Sprint(v.Shape().Dimensions)
			}
			if r.DType != v.DType().String() {
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

// String renders the summary as Lightning does: a table, then the totals.
func (s Summary) String() string {
	header := []string{"", "Name", "Shape", "DType", "Params", "Mode"}
	rows := [][]string{header}
	for i, r := range s.Rows {
		shape := r.Shape
		if shape == "" {
			shape = "-"
		}
		rows = append(rows, []string{fmt.Sprint(i), r.Name, shape, r.DType, humanCount(r.Params), r.Mode()})
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
