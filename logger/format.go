package logger

import (
	"math"
	"strconv"
)

// formatFloat renders v for metrics.csv: the shortest representation that
// round-trips, with NaN and infinities spelled "nan", "inf" and "-inf" as
// Python (and so Lightning) writes them.
func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
