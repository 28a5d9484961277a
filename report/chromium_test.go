package report

import (
	"bytes"
	"context"
	"github.com/voltml/volt/internal/testenv"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromiumPath is Debian's chromium; VOLT_CHROMIUM overrides it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := "/usr/bin/chromium"
	if p := os.Getenv("VOLT_CHROMIUM"); p != "" {
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		testenv.Missing(t, "no headless browser at "+path, "apt-get install chromium, or set VOLT_CHROMIUM")
	}
	if testing.Short() {
		t.Skip("headless browser check skipped in -short mode")
	}
	return path
}

// runChromium runs headless chromium on the page with extra flags and
// returns stdout, failing on an error or console error lines in stderr.
func runChromium(t *testing.T, bin, page string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--enable-logging=stderr", "--v=0",
		"--user-data-dir=" + t.TempDir(),
	}, extra...)
	args = append(args, "file://"+page)
	var stdout, stderr bytes.Buffer
	// Headless chromium in a container now and then crashes on start-up
	// (crashpad); a second try tells that from a page it cannot render.
	for try := 1; ; try++ {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil {
			break
		}
		if try == 2 || ctx.Err() != nil {
			t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
		}
		t.Logf("%s failed (%v), trying again", bin, err)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, ":CONSOLE") {
			t.Errorf("browser console: %s", line)
		}
	}
	return stdout.Bytes()
}

// TestReportInChromium renders a single-run and a comparison report in
// headless Chromium: the DOM must hold one plot per base metric with its
// series, the console no errors, and the screenshot the series' colours.
// Set VOLT_REPORT_SHOTS to a directory to keep the screenshots.
func TestReportInChromium(t *testing.T) {
	bin := chromiumPath(t)
	dir := t.TempDir()
	logs := filepath.Join(dir, "volt_logs")
	v0 := writeRunDir(t, logs, "version_0", synthCSV(0.004, false), synthHparams(0.004))
	writeRunDir(t, logs, "version_1", synthCSV(0.002, true), synthHparams(0.002))
	tests := []struct {
		name   string
		args   []string
		plots  int
		series int // <g class="series"> elements
		title  string
	}{
		{name: "single", args: []string{v0}, plots: 3, series: 10, title: "volt report: version_0"},
		{name: "compare", args: []string{logs}, plots: 3, series: 20, title: "volt report: version_0, version_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := filepath.Join(dir, tt.name+".html")
			res, _, err := WriteFile(page, tt.args, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Plots != tt.plots {
				t.Fatalf("Result.Plots = %d, want %d", res.Plots, tt.plots)
			}

			dom := string(runChromium(t, bin, page, "--dump-dom"))
			if n := strings.Count(dom, `<svg class="plot"`); n != tt.plots {
				t.Errorf("DOM has %d plots, want %d", n, tt.plots)
			}
			if n := strings.Count(dom, `<g class="series"`); n != tt.series {
				t.Errorf("DOM has %d series, want %d", n, tt.series)
			}
			if !strings.Contains(dom, "<h1>"+tt.title+"</h1>") {
				t.Errorf("DOM lacks the title %q", tt.title)
			}

			shot := filepath.Join(t.TempDir(), "shot.png")
			runChromium(t, bin, page, "--screenshot="+shot, "--window-size=1400,2000")
			f, err := os.Open(shot)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			// The plots are drawn: the train (blue) and val (vermillion)
			// colours cover a fair number of pixels.
			for _, c := range []struct {
				name    string
				r, g, b uint32
			}{{"blue #0072B2", 0x00, 0x72, 0xB2}, {"vermillion #D55E00", 0xD5, 0x5E, 0x00}} {
				if n := countColor(img, c.r, c.g, c.b); n < 500 {
					t.Errorf("screenshot has %d pixels of %s, want at least 500", n, c.name)
				}
			}
			if keep := os.Getenv("VOLT_REPORT_SHOTS"); keep != "" {
				b, _ := os.ReadFile(shot)
				if err := os.WriteFile(filepath.Join(keep, "report-"+tt.name+".png"), b, 0o644); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// countColor counts the pixels within a small distance of (r, g, b).
func countColor(img image.Image, r, g, b uint32) int {
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr>>8, r) && near(pg>>8, g) && near(pb>>8, b) {
				n++
			}
		}
	}
	return n
}

func near(a, b uint32) bool { return a+24 >= b && b+24 >= a }
