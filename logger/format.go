package logger

import "github.com/voltml/volt/internal/pyfloat"

// formatFloat renders v for metrics.csv: the shortest representation that
// round-trips, with NaN and infinities spelled "nan", "inf" and "-inf" as
// Python (and so Lightning) writes them.
func formatFloat(v float64) string { return pyfloat.Format(v, -1) }
