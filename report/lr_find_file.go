package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// LRFindFileName is the learning-rate finder's curve in a version
// directory, as tuner.LRFindResult.WriteCSV writes it (the tuner's LRFinder
// callback saves it there): LoadRun reads it and the report draws it.
const LRFindFileName = "lr_find.csv"

// ParseLRCurve reads a learning-rate finder's CSV: the header
// step,lr,loss,suggested and one row per step of the sweep, suggested 1 on
// the suggested step. name is the file's name in messages. The learning
// rate is drawn on a log axis unless the sweep is linear (equal steps).
func ParseLRCurve(r io.Reader, name string) (LRCurve, error) {
	c := LRCurve{Suggested: -1}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 4
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return c, fmt.Errorf("%s is empty", name)
	}
	if err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	if header[0] != "step" || header[1] != "lr" || header[2] != "loss" || header[3] != "suggested" {
		return c, fmt.Errorf("%s: header %q, want step,lr,loss,suggested", name, header)
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		lr, err1 := strconv.ParseFloat(rec[1], 64)
		loss, err2 := strconv.ParseFloat(rec[2], 64)
		if err := errors.Join(err1, err2); err != nil {
			return c, fmt.Errorf("%s:%d: lr %q and loss %q must be numbers", name, line, rec[1], rec[2])
		}
		switch rec[3] {
		case "1":
			if c.Suggested >= 0 {
				return c, fmt.Errorf("%s:%d: a second suggested step (the first is step %d)", name, line, c.Suggested)
			}
			c.Suggested = len(c.LRs)
		case "0":
		default:
			return c, fmt.Errorf("%s:%d: suggested must be 0 or 1, got %q", name, line, rec[3])
		}
		c.LRs = append(c.LRs, lr)
		c.Losses = append(c.Losses, loss)
	}
	if len(c.LRs) == 0 {
		return c, fmt.Errorf("%s has a header but no step", name)
	}
	c.LogLR = !isLinearSweep(c.LRs)
	return c, nil
}

// isLinearSweep reports whether lrs grow by equal steps (a linear sweep)
// rather than by equal ratios (exponential). The first gap is left out:
// Lightning's sweeps (and the tuner's) jump two steps after their first
// point.
func isLinearSweep(lrs []float64) bool {
	if len(lrs) < 4 {
		return slices.Min(lrs) <= 0
	}
	step := lrs[2] - lrs[1]
	span := math.Abs(lrs[len(lrs)-1] - lrs[1])
	for i := 3; i < len(lrs); i++ {
		if math.Abs(lrs[i]-lrs[i-1]-step) > 1e-6*span {
			return false
		}
	}
	return true
}
