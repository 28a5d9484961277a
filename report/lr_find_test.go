package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lrCSV writes a finder's CSV: n steps swept from 1e-6 to 1, exponentially
// or linearly, a loss falling until step fall then rising, suggested on
// step suggested (-1: none).
func lrCSV(n, fall, suggested int, linear bool) string {
	var b strings.Builder
	b.WriteString("step,lr,loss,suggested\n")
	for i := range n {
		lr := 1e-6 * math.Pow(1e6, float64(i)/float64(n-1))
		if linear {
			lr = 1e-6 + (1-1e-6)*float64(i)/float64(n-1)
		}
		loss := 2 - float64(min(i, fall))*0.05 + float64(max(i-fall, 0))*0.2
		s := 0
		if i == suggested {
			s = 1
		}
		fmt.Fprintf(&b, "%d,%s,%s,%d\n", i, strconv.FormatFloat(lr, 'g', -1, 64), strconv.FormatFloat(loss, 'g', -1, 64), s)
	}
	return b.String()
}

var (
	lrPointsRE     = regexp.MustCompile(`<svg class="plot lr-find"[^>]*>.*?<polyline[^>]*points="([^"]*)"`)
	lrSuggestionRE = regexp.MustCompile(`<circle class="suggestion" cx="([^"]*)" cy="([^"]*)"`)
)

// TestReportShowsLRFinder: a run directory with lr_find.csv gets the
// curve, the suggestion marked on its point and named in the caption; a
// malformed file is a note; a run without one has no section.
func TestReportShowsLRFinder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		csv       string // "" writes no lr_find.csv
		curves    int
		caption   string
		suggested int // index of the marked point, -1: none
		logAxis   bool
		note      string
	}{
		{"exponential", lrCSV(40, 25, 17, false), 1, "suggested learning rate 0.00041246 (step 17 of 40, loss 1.15)", 17, true, ""},
		{"linear", lrCSV(30, 20, 12, true), 1, "suggested learning rate 0.41379 (step 12 of 30, loss 1.4)", 12, false, ""},
		{"no suggestion", lrCSV(8, 5, -1, false), 1, "no suggestion (8 points are too few)", -1, true, ""},
		{"malformed", "step,lr,loss\n0,1e-3,2\n", 0, "", -1, false, "learning-rate finder curve left out"},
		{"absent", "", 0, "", -1, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := writeRunDir(t, t.TempDir(), "version_0", synthCSV(0.01, false), "lr: 0.001\n")
			if tc.csv != "" {
				if err := os.WriteFile(filepath.Join(d, LRFindFileName), []byte(tc.csv), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			page, res := renderDirs(t, Options{}, d)
			if res.LRCurves != tc.curves || strings.Count(page, `<svg class="plot lr-find"`) != tc.curves {
				t.Fatalf("%d curves reported, %d drawn, want %d", res.LRCurves, strings.Count(page, `<svg class="plot lr-find"`), tc.curves)
			}
			if has := strings.Contains(page, "<h2>Learning-rate finder</h2>"); has != (tc.curves > 0) {
				t.Errorf("section present %v, want %v", has, tc.curves > 0)
			}
			if res.Plots != len(plotRE.FindAllString(page, -1)) || res.Plots == 0 {
				t.Errorf("metric plots %d, drawn %d: the curve must not count as one", res.Plots, len(plotRE.FindAllString(page, -1)))
			}
			if tc.note != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), tc.note) {
				t.Errorf("warnings %q, want one saying %q", res.Warnings, tc.note)
			}
			if tc.curves == 0 {
				return
			}
			if !strings.Contains(page, tc.caption) {
				t.Errorf("page lacks the caption %q", tc.caption)
			}
			if got := strings.Contains(page, "learning rate (log)"); got != tc.logAxis {
				t.Errorf("log axis %v, want %v", got, tc.logAxis)
			}
			m := lrSuggestionRE.FindStringSubmatch(page)
			if (m != nil) != (tc.suggested >= 0) {
				t.Fatalf("suggestion marked %v, want %v", m != nil, tc.suggested >= 0)
			}
			if m == nil {
				return
			}
			pts := strings.Fields(lrPointsRE.FindStringSubmatch(page)[1])
			if want := m[1] + "," + m[2]; pts[tc.suggested] != want {
				t.Errorf("suggestion drawn at %s, the curve's point %d is at %s", want, tc.suggested, pts[tc.suggested])
			}
		})
	}
}

func TestParseLRCurveErrors(t *testing.T) {
	for _, tc := range []struct{ name, csv, want string }{
		{"empty", "", "lr_find.csv is empty"},
		{"header", "step,lr,loss,best\n", `header ["step" "lr" "loss" "best"], want step,lr,loss,suggested`},
		{"no rows", "step,lr,loss,suggested\n", "has a header but no step"},
		{"number", "step,lr,loss,suggested\n0,fast,1,0\n", `lr_find.csv:2: lr "fast" and loss "1" must be numbers`},
		{"flag", "step,lr,loss,suggested\n0,0.1,1,yes\n", `lr_find.csv:2: suggested must be 0 or 1, got "yes"`},
		{"two suggestions", "step,lr,loss,suggested\n0,0.1,1,1\n1,0.2,1,1\n", "lr_find.csv:3: a second suggested step (the first is step 0)"},
		{"columns", "step,lr,loss,suggested\n0,0.1,1\n", "wrong number of fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLRCurve(strings.NewReader(tc.csv), LRFindFileName)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
