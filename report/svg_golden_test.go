package report

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite report/testdata/plots/*.svg from the current renderer")

var svgRE = regexp.MustCompile(`(?s)<svg class="plot".*?</svg>`)

// TestPlotSVGGolden pins the plots' SVG byte for byte (axes, epoch
// regions, smoothing, markers, hover targets, legends and notes) for runs
// that exercise each of them: a single run on a log axis with smoothing,
// three compared runs with a NaN, the same on a linear axis and unsmoothed,
// and a single point beside non-finite values. go test ./report -run
// TestPlotSVGGolden -update rewrites the files after an intended change.
func TestPlotSVGGolden(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		csvs map[string]string
		opts Options
	}{
		{"single", map[string]string{"version_0": synthCSV(0.004, false)}, Options{}},
		{"compare", map[string]string{"version_0": synthCSV(0.004, false), "version_1": synthCSV(0.002, true), "version_10": "step,epoch,train_loss\n0,0,1\n"}, Options{}},
		{"compare_linear_raw", map[string]string{"version_0": synthCSV(0.004, false), "version_1": synthCSV(0.002, true)}, Options{LogScale: LogOff, Smooth: -1}},
		{"log_on_nonpositive", map[string]string{"version_0": "step,epoch,train_loss,val_loss\n0,0,2,1\n1,0,0,0.5\n2,0,-1,0.25\n3,1,0.5,0.125\n"}, Options{LogScale: LogOn}},
		{"single_point", map[string]string{"version_0": "step,epoch,lr,train_loss,val_acc\n5,0,0.1,nan,0.5\n"}, Options{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(dir, c.name, "volt_logs")
			for name, csv := range c.csvs {
				writeRunDir(t, root, name, csv, "")
			}
			page, _ := renderDirs(t, c.opts, root)
			got := strings.Join(svgRE.FindAllString(page, -1), "\n") + "\n"
			path := filepath.Join("testdata", "plots", c.name+".svg")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./report -run TestPlotSVGGolden -update writes it)", err)
			}
			if got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s differs at line %d:\n got %.300s\nwant %.300s", path, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s: %d lines, want %d", path, len(gl), len(wl))
			}
		})
	}
}
