package tuner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/voltml/volt/report"
)

// WriteCSV writes the curve as CSV: a header step,lr,loss,suggested and one
// row per step, suggested 1 on the suggested step (0 elsewhere).
func (r *LRFindResult) WriteCSV(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("step,lr,loss,suggested\n")
	for i := range r.Losses {
		s := 0
		if i == r.SuggestedIndex {
			s = 1
		}
		fmt.Fprintf(&b, "%d,%s,%s,%d\n", i, strconv.FormatFloat(r.LRs[i], 'g', -1, 64), strconv.FormatFloat(r.Losses[i], 'g', -1, 64), s)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteCSVFile writes the curve to path (see WriteCSV), creating its
// directory (a run's log directory may not exist before its Fit).
func (r *LRFindResult) WriteCSVFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tuner: LR curve CSV: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tuner: LR curve CSV: %w", err)
	}
	if err := r.WriteCSV(f); err != nil {
		f.Close()
		return fmt.Errorf("tuner: LR curve CSV %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tuner: LR curve CSV %s: %w", path, err)
	}
	return nil
}

// WriteHTMLFile writes a self-contained page with the curve and the
// suggestion to path, creating its directory.
func (r *LRFindResult) WriteHTMLFile(path string) error {
	var b bytes.Buffer
	c := report.LRCurve{LRs: r.LRs, Losses: r.Losses, Suggested: r.SuggestedIndex, LogLR: r.Mode != Linear}
	if err := report.WriteLRCurveHTML(&b, c); err != nil {
		return fmt.Errorf("tuner: LR curve page %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tuner: LR curve page: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("tuner: LR curve page: %w", err)
	}
	return nil
}
