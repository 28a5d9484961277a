package report

import (
	"math"
	"strings"
	"testing"
)

func TestLRCurveSVG(t *testing.T) {
	for _, tc := range []struct {
		name       string
		c          LRCurve
		points     int
		suggestion bool
		err        string
	}{
		{"log with suggestion", LRCurve{LRs: []float64{1e-4, 1e-3, 1e-2, 1e-1}, Losses: []float64{3, 2, 1, 5}, Suggested: 2, LogLR: true}, 4, true, ""},
		{"nan left out", LRCurve{LRs: []float64{0.1, 0.2, 0.3}, Losses: []float64{3, math.NaN(), 1}, Suggested: -1}, 2, false, ""},
		{"suggestion on nan", LRCurve{LRs: []float64{0.1, 0.2, 0.3}, Losses: []float64{3, math.NaN(), 1}, Suggested: 1}, 2, false, ""},
		{"lengths", LRCurve{LRs: []float64{0.1}, Losses: []float64{3, 2}}, 0, false, "1 learning rates but 2 losses"},
		{"nothing finite", LRCurve{LRs: []float64{0.1}, Losses: []float64{math.Inf(1)}}, 0, false, "no finite point to draw among 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := LRCurveSVG(tc.c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pts := svg[strings.Index(svg, `points="`)+len(`points="`):]
			pts = pts[:strings.Index(pts, `"`)]
			if n := len(strings.Fields(pts)); n != tc.points {
				t.Errorf("%d points drawn, want %d", n, tc.points)
			}
			if got := strings.Contains(svg, `class="suggestion"`); got != tc.suggestion {
				t.Errorf("suggestion drawn %v, want %v", got, tc.suggestion)
			}
		})
	}
}
