package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// renderDirs loads args and renders their page.
func renderDirs(t *testing.T, opts Options, args ...string) (string, *Result) {
	t.Helper()
	runs, skipped, err := Load(args)
	if err != nil {
		t.Fatal(err)
	}
	opts.Skipped = append(opts.Skipped, skipped...)
	var buf bytes.Buffer
	res, err := Render(&buf, runs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return buf.String(), res
}

var plotRE = regexp.MustCompile(`<svg class="plot" data-metric="([^"]*)"`)

// plotMetrics returns the data-metric of each plot in page order.
func plotMetrics(page string) []string {
	var out []string
	for _, m := range plotRE.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// legendLabels returns the legend texts of the plot for metric.
func legendLabels(t *testing.T, page, metric string) []string {
	t.Helper()
	i := strings.Index(page, `<svg class="plot" data-metric="`+metric+`"`)
	if i < 0 {
		t.Fatalf("no plot for %s", metric)
	}
	svg := page[i : i+strings.Index(page[i:], "</svg>")]
	j := strings.Index(svg, `<g class="legend"`)
	if j < 0 {
		t.Fatalf("plot %s has no legend", metric)
	}
	var out []string
	for _, m := range regexp.MustCompile(`<text [^>]*>([^<]*)</text></g>`).FindAllStringSubmatch(svg[j:], -1) {
		out = append(out, m[1])
	}
	return out
}

func TestRenderPlots(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		csvs    map[string]string // version dir name -> metrics.csv
		hparams string
		args    func(root string) []string
		plots   []string
		legends map[string][]string
		contain []string
		absent  []string
	}{
		{
			name:  "single run",
			csvs:  map[string]string{"version_0": synthCSV(0.004, false)},
			plots: []string{"loss", "acc", "lr"},
			legends: map[string][]string{
				"loss": {"train_loss", "val_loss/dataloader_idx_0", "val_loss/dataloader_idx_1", "test_loss = 0.031393"},
				"acc":  {"train_acc_step", "train_acc_epoch", "val_acc/dataloader_idx_0", "val_acc/dataloader_idx_1", "test_acc = 0.9703"},
			},
			contain: []string{"log scale", "epoch 2", "noisy step series smoothed", "<title>train_loss = ", "<h2>Hyperparameters</h2>"},
			absent:  []string{"<script", "<link", " src=", "href=", "url(", "NaN/Inf"},
		},
		{
			name:    "comparison of a parent's versions",
			csvs:    map[string]string{"version_0": synthCSV(0.004, false), "version_1": synthCSV(0.002, true), "version_10": "step,epoch,train_loss\n0,0,1\n"},
			hparams: "lr: 0.1\n",
			args:    func(root string) []string { return []string{root} },
			plots:   []string{"loss", "acc", "lr"},
			legends: map[string][]string{
				"loss": {"version_0", "version_1", "version_10", "train_loss", "val_loss/dataloader_idx_0", "val_loss/dataloader_idx_1", "test_loss"},
				"lr":   {"version_0", "version_1", "lr"},
			},
			contain: []string{"3 runs compared", "1 NaN/Inf value not drawn", "version_1 · train_loss = ", ` win"`, "show only the"},
		},
		{
			name:    "empty metrics",
			csvs:    map[string]string{"version_0": "step,epoch,train_loss\n"},
			plots:   nil,
			contain: []string{"No metrics to plot", "has no logged values yet", "No hyperparameters were recorded"},
		},
		{
			name:    "single point and non-finite only",
			csvs:    map[string]string{"version_0": "step,epoch,lr,train_loss,val_acc\n5,0,0.1,nan,0.5\n"},
			plots:   []string{"loss", "acc", "lr"},
			contain: []string{"no finite values to plot", "<title>val_acc = 0.5\nstep 5 · epoch 0</title>"},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(dir, string(rune('a'+i)), "volt_logs")
			var args []string
			for name, csv := range tt.csvs {
				hp := tt.hparams
				if hp == "" && strings.Contains(csv, "lr,") && strings.Count(csv, "\n") > 10 {
					hp = synthHparams(0.004)
				}
				args = append(args, writeRunDir(t, root, name, csv, hp))
			}
			if tt.args != nil {
				args = tt.args(root)
			}
			page, res := renderDirs(t, Options{}, args...)
			got := plotMetrics(page)
			if strings.Join(got, ",") != strings.Join(tt.plots, ",") || res.Plots != len(tt.plots) {
				t.Errorf("plots %v (Result.Plots %d), want %v", got, res.Plots, tt.plots)
			}
			if n := strings.Count(page, `<svg class="plot"`); n != len(tt.plots) {
				t.Errorf("%d <svg class=\"plot\"> elements, want %d", n, len(tt.plots))
			}
			for metric, want := range tt.legends {
				if got := legendLabels(t, page, metric); strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("legend of %s = %q, want %q", metric, got, want)
				}
			}
			for _, s := range tt.contain {
				if !strings.Contains(page, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(page, s) {
					t.Errorf("page contains %q", s)
				}
			}
		})
	}
}

func TestHparamTable(t *testing.T) {
	dir := t.TempDir()
	a := writeRunDir(t, dir, "a", synthCSV(0.004, false), synthHparams(0.004))
	b := writeRunDir(t, dir, "b", synthCSV(0.002, false), synthHparams(0.002)+"extra: true\n")
	c := writeRunDir(t, dir, "c", synthCSV(0.002, false), "")
	page, res := renderDirs(t, Options{}, a, b, c)
	for _, want := range []string{
		`<tr class="differ"><th><code>lr</code></th><td><code>0.004</code></td><td><code>0.002</code></td><td><span class="muted">–</span></td></tr>`,
		`<tr class="differ"><th><code>extra</code></th>`,
		`<tr class="differ"><th><code>model.hidden</code></th><td><code>[256, 256]</code></td><td><code>[256, 256]</code></td><td><span class="muted">–</span>`,
		"show only the 6 differing values",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "c: no hparams.yaml in "+c)
	}
	if !found {
		t.Errorf("warnings %q lack the missing hparams.yaml of c", res.Warnings)
	}

	// Two runs agreeing on a key leave it unmarked.
	page, _ = renderDirs(t, Options{}, a, b)
	if !strings.Contains(page, `<tr class="same"><th><code>model.dropout</code></th>`) {
		t.Error("equal hyperparameter marked as differing")
	}
}

func TestLogScaleOption(t *testing.T) {
	dir := t.TempDir()
	d := writeRunDir(t, dir, "v", "step,train_loss\n0,2\n1,0.5\n2,0.001\n", "")
	for _, tt := range []struct {
		scale LogScale
		log   bool
	}{{LogAuto, true}, {LogOff, false}, {LogOn, true}} {
		page, _ := renderDirs(t, Options{LogScale: tt.scale}, d)
		if got := strings.Contains(page, "log scale"); got != tt.log {
			t.Errorf("scale %v: log axis %v, want %v", tt.scale, got, tt.log)
		}
	}
	d2 := writeRunDir(t, dir, "w", "step,train_loss\n0,2\n1,0.5\n2,0.1\n", "")
	if page, _ := renderDirs(t, Options{}, d2); strings.Contains(page, "log scale") {
		t.Error("auto chose a log axis for values within two decades")
	}
}

func TestResolveDirs(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "volt_logs")
	for _, v := range []string{"version_10", "version_2", "custom"} {
		writeRunDir(t, logs, v, "step,a\n0,1\n", "")
	}
	if err := os.MkdirAll(filepath.Join(logs, "version_3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		dirs    []string
		skipped []string
		wantErr string
	}{
		{name: "version dir", args: []string{logs + "/version_2"}, dirs: []string{logs + "/version_2"}},
		{name: "metrics file", args: []string{logs + "/version_2/metrics.csv"}, dirs: []string{logs + "/version_2"}},
		{name: "parent", args: []string{logs}, dirs: []string{logs + "/version_2", logs + "/version_10", logs + "/custom"}, skipped: []string{logs + "/version_3"}},
		{name: "duplicates dropped", args: []string{logs + "/version_2", logs + "/version_2/"}, dirs: []string{logs + "/version_2"}},
		{name: "no metrics.csv", args: []string{dir + "/empty"}, wantErr: "report: no metrics.csv or TensorBoard event file in " + dir + "/empty"},
		{name: "root hint", args: []string{dir}, wantErr: "(did you mean " + logs + "?)"},
		{name: "missing", args: []string{dir + "/nope"}, wantErr: dir + "/nope does not exist"},
		{name: "none", args: nil, wantErr: "no log directory given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dirs, skipped, err := ResolveDirs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(dirs, ",") != strings.Join(tt.dirs, ",") || strings.Join(skipped, ",") != strings.Join(tt.skipped, ",") {
				t.Errorf("dirs %v skipped %v, want %v and %v", dirs, skipped, tt.dirs, tt.skipped)
			}
		})
	}
}

func TestLoadRunErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadRun(dir); err == nil || err.Error() != "report: no metrics.csv or TensorBoard event file in "+dir {
		t.Errorf("LoadRun of a directory without metrics.csv: %v", err)
	}
	bad := writeRunDir(t, dir, "bad", "step,a\n0,zz\n", "")
	if _, err := LoadRun(bad); err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "metrics.csv")+":2") {
		t.Errorf("LoadRun of a malformed metrics.csv: %v", err)
	}
	hp := writeRunDir(t, dir, "hp", "step,a\n0,1\n", "- not\n- a map\n")
	r, err := LoadRun(hp)
	if err != nil || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "hparams.yaml is not a YAML mapping") {
		t.Errorf("LoadRun with a list hparams.yaml: %v, notes %q", err, r.Notes)
	}
}

func TestRunNames(t *testing.T) {
	tests := []struct {
		dirs []string
		want []string
	}{
		{[]string{"/x/volt_logs/version_3"}, []string{"version_3"}},
		{[]string{"/x/volt_logs/version_0", "/x/volt_logs/version_1"}, []string{"version_0", "version_1"}},
		{[]string{"/tmp/rep1/volt_logs/version_0", "/tmp/rep2/volt_logs/version_0"}, []string{"rep1", "rep2"}},
		{[]string{"/a/r1/volt_logs/version_0", "/a/r1/volt_logs/version_1", "/a/r2/volt_logs/version_0"}, []string{"r1/version_0", "r1/version_1", "r2/version_0"}},
		{[]string{"/a/b/version_0", "/a/c/d/version_0"}, []string{"b/version_0", "c/d/version_0"}},
	}
	for _, tt := range tests {
		if got := RunNames(tt.dirs); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("RunNames(%v) = %v, want %v", tt.dirs, got, tt.want)
		}
	}
}

func TestLargeLogStaysSmall(t *testing.T) {
	var b strings.Builder
	b.WriteString("step,epoch,train_loss\n")
	for i := range 50000 {
		fmt.Fprintf(&b, "%d,%d,%g\n", i, i/5000, 2/(1+float64(i)/500)*(1+0.3*math.Sin(float64(i)*0.77)))
	}
	d := writeRunDir(t, t.TempDir(), "v", b.String(), "")
	page, res := renderDirs(t, Options{}, d)
	if res.Plots != 1 {
		t.Fatalf("%d plots, want 1", res.Plots)
	}
	if len(page) > 400_000 {
		t.Errorf("page of a 50000-row log is %d bytes, want at most 400000", len(page))
	}
	if n := strings.Count(page, `class="hit"`); n > maxHoverDots+1 {
		t.Errorf("%d hover targets, want at most %d", n, maxHoverDots+1)
	}
	if !strings.Contains(page, "smoothed over ~200 points") {
		t.Error("a long noisy series is not smoothed")
	}
}
