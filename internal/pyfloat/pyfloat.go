// Package pyfloat formats floats as Python writes them where Go and Python
// differ: NaN and the infinities are "nan", "inf" and "-inf".
package pyfloat

import (
	"math"
	"strconv"
)

// Format is strconv.FormatFloat(v, 'g', prec, 64) (prec -1: the shortest
// representation that round-trips) with NaN and infinities spelled as
// Python's str and '{:g}' format spell them.
func Format(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', prec, 64)
}
