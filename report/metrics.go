package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Column names with a special meaning in metrics.csv.
const (
	stepColumn  = "step"
	epochColumn = "epoch"
)

// Series is the logged values of one metric, in file order.
type Series struct {
	Name   string
	Steps  []float64 // the x coordinate of each value
	Epochs []float64 // the row's epoch; NaN when the row has none
	Values []float64 // may hold NaN and ±Inf, as logged
}

// Len returns the number of logged values.
func (s *Series) Len() int { return len(s.Values) }

// NonFinite returns how many values are NaN or infinite.
func (s *Series) NonFinite() int {
	n := 0
	for _, v := range s.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

// Metrics is a parsed metrics.csv.
type Metrics struct {
	Rows    int                // data rows read
	Names   []string           // metric names with at least one value, sorted
	Series  map[string]*Series // by metric name
	MaxStep float64            // largest step; NaN when there are no rows
	// EpochEnds[e] is the last step logged with epoch e; nil without an
	// epoch column.
	EpochEnds []float64
}

// Epochs returns the number of epochs seen (the largest epoch + 1).
func (m *Metrics) Epochs() int { return len(m.EpochEnds) }

// ParseMetrics reads a metrics.csv as volt's (and Lightning's) CSV logger
// writes it: a header "step,<metric names>" (usually with an "epoch"
// column), one row per log call, empty cells for metrics not logged in
// that row and "nan", "inf", "-inf" for non-finite values. A later header
// line (a file appended to after its header was widened) re-maps the
// columns of the rows that follow it; rows shorter than their header are
// padded with empty cells. name is used in error messages.
func ParseMetrics(r io.Reader, name string) (*Metrics, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	m := &Metrics{Series: map[string]*Series{}, MaxStep: math.NaN()}
	var header []string
	epochCol := -1
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if header == nil || (len(rec) > 0 && strings.TrimSpace(rec[0]) == stepColumn) {
			if header, epochCol, err = parseHeader(rec); err != nil {
				return nil, fmt.Errorf("report: %s:%d: %w", name, line, err)
			}
			continue
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // blank line
		}
		if len(rec) > len(header) {
			return nil, fmt.Errorf("report: %s:%d: row has %d cells but the header has %d columns", name, line, len(rec), len(header))
		}
		step, err := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
		if err != nil || math.IsNaN(step) || math.IsInf(step, 0) {
			return nil, fmt.Errorf("report: %s:%d: step %q is not a number", name, line, rec[0])
		}
		epoch := math.NaN()
		if epochCol >= 0 && epochCol < len(rec) && strings.TrimSpace(rec[epochCol]) != "" {
			if epoch, err = strconv.ParseFloat(strings.TrimSpace(rec[epochCol]), 64); err != nil || epoch < 0 || epoch != math.Trunc(epoch) {
				return nil, fmt.Errorf("report: %s:%d: epoch %q is not a whole number", name, line, rec[epochCol])
			}
			if !onlyTestMetrics(header, rec, epochCol) {
				m.noteEpoch(int(epoch), step)
			}
		}
		m.Rows++
		if math.IsNaN(m.MaxStep) || step > m.MaxStep {
			m.MaxStep = step
		}
		for i := 1; i < len(rec); i++ {
			cell := strings.TrimSpace(rec[i])
			if i == epochCol || cell == "" {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				return nil, fmt.Errorf("report: %s:%d: column %q: %q is not a number", name, line, header[i], cell)
			}
			s := m.Series[header[i]]
			if s == nil {
				s = &Series{Name: header[i]}
				m.Series[header[i]] = s
				m.Names = append(m.Names, header[i])
			}
			s.Steps = append(s.Steps, step)
			s.Epochs = append(s.Epochs, epoch)
			s.Values = append(s.Values, v)
		}
	}
	if header == nil {
		return nil, fmt.Errorf("report: %s is empty: no header, no metrics were logged", name)
	}
	slices.Sort(m.Names)
	return m, nil
}

// parseHeader checks a header record and returns its column names and the
// index of the epoch column (-1 when absent).
func parseHeader(rec []string) ([]string, int, error) {
	header := make([]string, len(rec))
	epochCol := -1
	seen := map[string]bool{}
	for i, c := range rec {
		c = strings.TrimSpace(c)
		if i == 0 {
			c = strings.TrimPrefix(c, "\ufeff")
		}
		header[i] = c
		switch {
		case c == "":
			return nil, -1, fmt.Errorf("header column %d has no name", i+1)
		case seen[c]:
			return nil, -1, fmt.Errorf("header names column %q twice", c)
		case c == epochColumn:
			epochCol = i
		}
		seen[c] = true
	}
	if header[0] != stepColumn {
		return nil, -1, fmt.Errorf("header starts with %q, want %q (is this a volt or Lightning metrics.csv?)", header[0], stepColumn)
	}
	return header, epochCol, nil
}

// onlyTestMetrics reports whether a row's values are all test metrics
// ("test_…"): the row Trainer.Test logs after Fit carries the epoch count
// (current_epoch, one past the last epoch), which is no epoch of training.
func onlyTestMetrics(header, rec []string, epochCol int) bool {
	test := false
	for i := 1; i < len(rec); i++ {
		if i == epochCol || strings.TrimSpace(rec[i]) == "" {
			continue
		}
		if !strings.HasPrefix(header[i], "test_") {
			return false
		}
		test = true
	}
	return test
}

// noteEpoch records that step was logged in epoch.
func (m *Metrics) noteEpoch(epoch int, step float64) {
	for len(m.EpochEnds) <= epoch {
		m.EpochEnds = append(m.EpochEnds, math.NaN())
	}
	if math.IsNaN(m.EpochEnds[epoch]) || step > m.EpochEnds[epoch] {
		m.EpochEnds[epoch] = step
	}
}
