// Package kv reads the key=value lines the examples print last, for their
// tests.
package kv

import (
	"strconv"
	"strings"
	"testing"
)

// Parse returns the number after "=" on each line of out that has one,
// by the text before it; lines without "=" are passed over, and a value
// that is not a number fails t.
func Parse(t testing.TB, out string) map[string]float64 {
	t.Helper()
	r := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		r[k] = f
	}
	return r
}
