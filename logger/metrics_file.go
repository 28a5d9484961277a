package logger

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// stepColumn is the first column of metrics.csv; no metric may use it.
const stepColumn = "step"

// metricsRow is one LogMetrics call.
type metricsRow struct {
	step   int64
	values map[string]float64
}

// metricsFile buffers metric rows for one CSV file. Rows are appended while
// the header is unchanged; when new metric names appear the whole file is
// rewritten atomically with the widened header, keeping earlier rows.
type metricsFile struct {
	path    string
	keys    []string            // sorted union of metric names seen
	known   map[string]struct{} // set view of keys
	onDisk  []string            // metric names in the header on disk
	written bool                // whether this logger has written path yet
	pending []metricsRow
	rows    int64 // data rows of the run in the file
	// unsynced: the file was written since the last sync.
	unsynced bool
	// resuming: the file is a killed run's; its first rows rows are the
	// run's history, the others are dropped by the next write (resumeAt).
	resuming bool
}

// newMetricsFile returns an empty buffer for the CSV file at path.
func newMetricsFile(path string) *metricsFile {
	return &metricsFile{path: path, known: map[string]struct{}{}}
}

// add buffers one row, copying metrics. It rejects the reserved name "step"
// and the empty name without changing any state.
func (m *metricsFile) add(metrics map[string]float64, step int64) error {
	var fresh []string
	for k := range metrics {
		if k == stepColumn || k == "" {
			return fmt.Errorf("logger: metric name %q is invalid for %s: names must be non-empty and not %q (the step column)", k, m.path, stepColumn)
		}
		if _, ok := m.known[k]; !ok {
			fresh = append(fresh, k)
		}
	}
	for _, k := range fresh {
		m.known[k] = struct{}{}
		m.keys = append(m.keys, k)
	}
	if len(fresh) > 0 {
		slices.Sort(m.keys)
	}
	m.pending = append(m.pending, metricsRow{step: step, values: maps.Clone(metrics)})
	return nil
}

// resumeAt makes the file at path the history of a resumed run: its first
// rows data rows are kept, the rows after them dropped at the next write.
func (m *metricsFile) resumeAt(rows int64) {
	m.written, m.resuming, m.rows = true, true, rows
}

// flush writes the pending rows. The first write of this logger replaces
// any file left at path by an earlier run (as Lightning does), unless the
// logger resumes that run. Pending rows are kept when the write fails, so a
// later flush retries them.
func (m *metricsFile) flush() error {
	if len(m.pending) == 0 {
		return nil
	}
	if m.written && !m.resuming && slices.Equal(m.onDisk, m.keys) {
		err := m.appendPending()
		if !errors.Is(err, fs.ErrNotExist) {
			if err == nil {
				m.rows += int64(len(m.pending))
				m.pending, m.unsynced = nil, true
			}
			return err
		}
		// The file vanished under us: write it afresh below.
	}
	return m.flushAll()
}

// flushAll atomically rewrites the file with the run's rows and the
// pending ones.
func (m *metricsFile) flushAll() error {
	n, err := m.rewrite()
	if err != nil {
		return err
	}
	m.onDisk = slices.Clone(m.keys)
	m.written, m.resuming = true, false
	m.rows = int64(n + len(m.pending))
	m.pending, m.unsynced = nil, true
	return nil
}

// sync commits what flush wrote to stable storage: the file, and its
// directory for a rename.
func (m *metricsFile) sync() error {
	if !m.unsynced {
		return nil
	}
	for _, path := range []string{m.path, filepath.Dir(m.path)} {
		f, err := os.Open(path)
		if err == nil {
			err = errors.Join(f.Sync(), f.Close())
		}
		if err != nil {
			return fmt.Errorf("logger: sync %s: %w", path, err)
		}
	}
	m.unsynced = false
	return nil
}

// appendPending appends the pending rows to the existing file. It returns an
// error matching fs.ErrNotExist when the file is missing.
func (m *metricsFile) appendPending() error {
	f, err := os.OpenFile(m.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("logger: append to %s: %w", m.path, err)
	}
	err = m.writeRows(f, false, nil)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("logger: append to %s: %w", m.path, err)
	}
	return nil
}

// rewrite atomically writes the file with the current header: the run's
// rows already on disk (re-laid out for the new header), then the pending
// rows. It returns the number of rows kept from the file.
func (m *metricsFile) rewrite() (int, error) {
	var old [][]string
	if m.written {
		var err error
		if old, err = m.readWritten(); err != nil {
			return 0, err
		}
	}
	err := writeFileAtomic(m.path, func(w io.Writer) error {
		return m.writeRows(w, true, old)
	})
	return len(old), err
}

// writeRows writes, CSV-encoded, the header when withHeader is set, then
// the old rows, then the pending rows.
func (m *metricsFile) writeRows(w io.Writer, withHeader bool, old [][]string) error {
	cw := csv.NewWriter(w)
	if withHeader {
		if err := cw.Write(m.header()); err != nil {
			return err
		}
	}
	for _, rec := range old {
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	for _, row := range m.pending {
		if err := cw.Write(m.record(row)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// header returns the current header record.
func (m *metricsFile) header() []string {
	return append([]string{stepColumn}, m.keys...)
}

// record lays out row for the current header; missing metrics are empty.
func (m *metricsFile) record(row metricsRow) []string {
	rec := make([]string, 1+len(m.keys))
	rec[0] = strconv.FormatInt(row.step, 10)
	for i, k := range m.keys {
		if v, ok := row.values[k]; ok {
			rec[i+1] = formatFloat(v)
		}
	}
	return rec
}

// readWritten reads back the run's rows in the file (all of them, or the
// first m.rows when resuming a killed run, whose metric names then join the
// header) and lays them out for the current header. A missing file yields
// no rows.
func (m *metricsFile) readWritten() ([][]string, error) {
	f, err := os.Open(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("logger: read back %s to widen its header: %w", m.path, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("logger: read back %s to widen its header: %w", m.path, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if m.resuming {
		recs = recs[:1+min(int(m.rows), len(recs)-1)]
		m.adoptNames(recs)
	}
	pos := make(map[string]int, 1+len(m.keys))
	for i, name := range m.header() {
		pos[name] = i
	}
	width := 1 + len(m.keys)
	out := make([][]string, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		row := make([]string, width)
		for i, name := range recs[0] {
			if j, ok := pos[name]; ok && i < len(rec) {
				row[j] = rec[i]
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// adoptNames adds to the header the metric names that have a value in some
// row of recs (a header record, then data rows).
func (m *metricsFile) adoptNames(recs [][]string) {
	added := false
	for i, name := range recs[0] {
		if _, ok := m.known[name]; ok || name == stepColumn || name == "" {
			continue
		}
		for _, rec := range recs[1:] {
			if i < len(rec) && rec[i] != "" {
				m.known[name] = struct{}{}
				m.keys = append(m.keys, name)
				added = true
				break
			}
		}
	}
	if added {
		slices.Sort(m.keys)
	}
}
