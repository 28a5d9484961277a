package pyfloat

import (
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		prec int
		want string
	}{
		{math.NaN(), -1, "nan"}, {math.Inf(1), 3, "inf"}, {math.Inf(-1), -1, "-inf"},
		{0.1, -1, "0.1"}, {1234.5678, 3, "1.23e+03"}, {2.5e-7, -1, "2.5e-07"},
	} {
		if got := Format(tc.v, tc.prec); got != tc.want {
			t.Errorf("Format(%v, %d) = %q, want %q", tc.v, tc.prec, got, tc.want)
		}
	}
}
