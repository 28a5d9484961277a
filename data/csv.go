package data

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// CSVOptions says how ReadCSV reads a file.
type CSVOptions struct {
	// NoHeader says the first row is data, not column names; the columns
	// are then named by their number, "0", "1", ….
	NoHeader bool
	// Inputs are the columns of the examples' input field (float32, in
	// this order); at least one.
	Inputs []string
	// Labels are the columns of the label field (float32, or int32 with
	// IntLabels); none for a dataset without labels.
	Labels []string
	// IntLabels parses the labels as integers (class indices): a scalar
	// int32 label for one column, else []int32.
	IntLabels bool
	// NumClasses, with IntLabels, is the number of classes: every label
	// must be in [0, NumClasses), or ReadCSV fails naming the cell (a
	// class out of range would otherwise train silently: GoMLX's one-hot
	// encoding counts it nowhere). 0 checks nothing.
	NumClasses int
	// Comma is the field separator; 0 means ','.
	Comma rune
}

// CSVDataset is a map-style Dataset read from a CSV file by ReadCSV: one
// example per data row.
type CSVDataset struct {
	inputs    [][]float32
	labels    [][]float32
	intLabels [][]int32
	scalar    bool // one int label column: a scalar label
}

var _ Dataset = (*CSVDataset)(nil)

// ReadCSV reads the selected columns of the CSV file at path (RFC 4180, as
// encoding/csv reads it). Every selected cell must parse as a number
// (strconv.ParseFloat, or ParseInt for IntLabels); an error names the file,
// its line and the column (name and number), and what would be valid.
func ReadCSV(path string, opts CSVOptions) (*CSVDataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data.ReadCSV: %w", err)
	}
	defer f.Close()
	ds, err := readCSV(f, path, opts)
	if err != nil {
		return nil, fmt.Errorf("data.ReadCSV: %w", err)
	}
	return ds, nil
}

// csvColumn is a selected column: its name and number.
type csvColumn struct {
	name  string
	index int
}

// skipByteOrderMark returns r without the UTF-8 byte-order mark it may
// start with (Excel's "CSV UTF-8" writes one), which would otherwise be
// part of the first column's name or first value.
func skipByteOrderMark(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	return br
}

// readCSV implements ReadCSV over r.
func readCSV(r io.Reader, path string, opts CSVOptions) (*CSVDataset, error) {
	if len(opts.Inputs) == 0 {
		return nil, errors.New("CSVOptions.Inputs: select at least one input column")
	}
	switch {
	case opts.NumClasses < 0:
		return nil, fmt.Errorf("CSVOptions.NumClasses: %d; want the number of classes (0: not checked)", opts.NumClasses)
	case opts.NumClasses > 0 && !opts.IntLabels:
		return nil, fmt.Errorf("CSVOptions.NumClasses: %d needs IntLabels (class indices)", opts.NumClasses)
	}
	cr := csv.NewReader(skipByteOrderMark(r))
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	cr.ReuseRecord = true
	var names []string
	first, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: the file is empty", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if opts.NoHeader {
		for i := range first {
			names = append(names, strconv.Itoa(i))
		}
	} else {
		names = append(names, first...)
	}
	find := func(what string, want []string) ([]csvColumn, error) {
		cols := make([]csvColumn, len(want))
		for i, w := range want {
			idx := -1
			for j, n := range names {
				if strings.TrimSpace(n) == w {
					idx = j
					break
				}
			}
			if idx < 0 {
				return nil, fmt.Errorf("%s: CSVOptions.%s[%d]: no column %q; the columns are %q", path, what, i, w, names)
			}
			cols[i] = csvColumn{name: w, index: idx}
		}
		return cols, nil
	}
	inputs, err := find("Inputs", opts.Inputs)
	if err != nil {
		return nil, err
	}
	labels, err := find("Labels", opts.Labels)
	if err != nil {
		return nil, err
	}
	ds := &CSVDataset{scalar: opts.IntLabels && len(labels) == 1}
	row := func(record []string) error {
		in := make([]float32, len(inputs))
		for i, c := range inputs {
			v, err := parseCSVFloat(cr, path, record, c)
			if err != nil {
				return err
			}
			in[i] = v
		}
		ds.inputs = append(ds.inputs, in)
		if opts.IntLabels {
			out := make([]int32, len(labels))
			for i, c := range labels {
				cell := strings.TrimSpace(record[c.index])
				v, err := strconv.ParseInt(cell, 10, 32)
				if err != nil {
					line, col := cr.FieldPos(c.index)
					return fmt.Errorf("%s:%d:%d: column %q (number %d): %q is not an int32 label (IntLabels: a class index such as 0, 1, 2)", path, line, col, c.name, c.index, cell)
				}
				if n := int64(opts.NumClasses); n > 0 && (v < 0 || v >= n) {
					line, col := cr.FieldPos(c.index)
					return fmt.Errorf("%s:%d:%d: column %q (number %d): class %d is out of range for CSVOptions.NumClasses %d (valid classes: 0 to %d)", path, line, col, c.name, c.index, v, n, n-1)
				}
				out[i] = int32(v)
			}
			ds.intLabels = append(ds.intLabels, out)
			return nil
		}
		out := make([]float32, len(labels))
		for i, c := range labels {
			v, err := parseCSVFloat(cr, path, record, c)
			if err != nil {
				return err
			}
			out[i] = v
		}
		ds.labels = append(ds.labels, out)
		return nil
	}
	if opts.NoHeader {
		if err := row(first); err != nil {
			return nil, err
		}
	}
	for {
		record, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := row(record); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// parseCSVFloat parses the cell of column c as a float32.
func parseCSVFloat(cr *csv.Reader, path string, record []string, c csvColumn) (float32, error) {
	cell := strings.TrimSpace(record[c.index])
	v, err := strconv.ParseFloat(cell, 32)
	if err != nil && !(errors.Is(err, strconv.ErrRange) && !math.IsInf(v, 0)) {
		line, col := cr.FieldPos(c.index)
		return 0, fmt.Errorf("%s:%d:%d: column %q (number %d): %q is not a float32 number (such as 1.5, -2e3, NaN or Inf)", path, line, col, c.name, c.index, cell)
	}
	return float32(v), nil
}

// Len implements Dataset.
func (d *CSVDataset) Len() int { return len(d.inputs) }

// Get implements Dataset.
func (d *CSVDataset) Get(i int) (Example, error) {
	if i < 0 || i >= len(d.inputs) {
		return Example{}, fmt.Errorf("data.CSVDataset.Get: index %d out of range [0, %d)", i, len(d.inputs))
	}
	ex := Example{Inputs: []Field{{Value: d.inputs[i]}}}
	switch {
	case d.scalar:
		ex.Labels = []Field{{Value: d.intLabels[i][0]}}
	case d.intLabels != nil && len(d.intLabels[i]) > 0:
		ex.Labels = []Field{{Value: d.intLabels[i]}}
	case d.labels != nil && len(d.labels[i]) > 0:
		ex.Labels = []Field{{Value: d.labels[i]}}
	}
	return ex, nil
}
