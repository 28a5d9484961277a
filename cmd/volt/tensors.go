package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/voltml/volt/checkpoint"
)

// writeTensors prints a table of the tensors (name, dtype, shape, number of
// elements, bytes) followed by the totals. Text columns are left-aligned,
// numbers right-aligned.
func writeTensors(w io.Writer, infos []checkpoint.TensorInfo) error {
	if len(infos) == 0 {
		_, err := fmt.Fprintln(w, "tensors:       (none)")
		return err
	}
	rows := [][]string{{"NAME", "DTYPE", "SHAPE", "ELEMENTS", "BYTES"}}
	var elements, size int64
	for _, ti := range infos {
		dtype, err := checkpoint.DTypeName(ti.DType)
		if err != nil {
			return err
		}
		rows = append(rows, []string{ti.Name, dtype, shapeString(ti.Shape),
			fmt.Sprint(ti.NumElements()), fmt.Sprint(ti.ByteSize())})
		elements += ti.NumElements()
		size += ti.ByteSize()
	}
	fmt.Fprintln(w, "tensors:")
	if err := writeTable(w, rows, []bool{false, false, false, true, true}); err != nil {
		return err
	}
	plural := "s"
	if len(infos) == 1 {
		plural = ""
	}
	_, err := fmt.Fprintf(w, "total:         %d tensor%s, %d elements, %d bytes (%s)\n",
		len(infos), plural, elements, size, humanBytes(size))
	return err
}

// writeTable writes rows indented by two spaces, columns separated by two
// spaces, right-aligning the columns flagged in right.
func writeTable(w io.Writer, rows [][]string, right []bool) error {
	widths := make([]int, len(right))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		line.WriteString(" ")
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			line.WriteString(" ")
			if right[i] {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
			if i < len(row)-1 {
				line.WriteString(" ")
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(line.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// shapeString renders a shape as "[2, 3]", "[]" for a scalar.
func shapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// humanBytes renders n bytes with a binary unit: "512 B", "1.5 KiB", ….
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	value := float64(n)
	for _, unit := range []string{"KiB", "MiB", "GiB", "TiB"} {
		value /= 1024
		if value < 1024 || unit == "TiB" {
			return fmt.Sprintf("%.1f %s", value, unit)
		}
	}
	return ""
}
