package main

import (
	"fmt"
	"io"

	"github.com/voltml/volt/metrics"
)

// printConfusion prints a [C, C] confusion matrix: a header of predicted
// digits, then one row per true digit.
func printConfusion(out io.Writer, cm metrics.Value) {
	if len(cm.Dims) != 2 || cm.Dims[0] != cm.Dims[1] {
		fmt.Fprintf(out, "confusion matrix of shape %v\n", cm.Dims)
		return
	}
	n := cm.Dims[0]
	fmt.Fprintln(out, "confusion matrix (rows: true digit, columns: predicted digit):")
	fmt.Fprint(out, "   ")
	for j := range n {
		fmt.Fprintf(out, " %5d", j)
	}
	fmt.Fprintln(out)
	for i := range n {
		fmt.Fprintf(out, "%2d:", i)
		for j := range n {
			fmt.Fprintf(out, " %5.0f", cm.Data[i*n+j])
		}
		fmt.Fprintln(out)
	}
}
