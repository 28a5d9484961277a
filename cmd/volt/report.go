package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/voltml/volt/report"
)

// reportUsage is the help text of "volt report".
const reportUsage = `Usage: volt report [-o FILE] [-title TEXT] [-log auto|on|off] [-smooth auto|off|N] DIR...

Writes one self-contained HTML page (no scripts, works offline) with a plot
per metric (train, val and test series on shared axes, x = step), a summary
of final and best values, the hyperparameters table, and the learning-rate
finder's curve with its suggestion when a run directory holds lr_find.csv
(saved there by the tuner's LRFinder).

Each DIR is a version directory holding metrics.csv (volt_logs/version_0)
or, for a run logged to TensorBoard only, its event files (the scalars, and
the hparams plugin's values), or a parent such as volt_logs/ whose
version_* directories are all included. With several runs the plots compare them, one colour per run,
and the hyperparameters table highlights the values that differ.

Flags (they may also follow the directories):
  -o FILE      output page (default DIR/report.html for one version
               directory, ./volt_report.html otherwise)
  -title TEXT  page title (default: "volt report: <run names>")
  -log MODE    y axis scale: auto (log when all values are positive and
               span more than two decades), on, off (default auto)
  -smooth N    smoothing drawn over noisy step-level series (a centred
               Gaussian, so the curve does not lag; raw values stay
               visible, faint): auto (about 1/15 of the points; short or
               smooth series are left alone), off, or a window of N
               points (default auto)
`

// runReport executes "volt report ...".
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("volt report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "output file")
	title := fs.String("title", "", "page title")
	logMode := fs.String("log", "auto", "y axis scale: auto, on, off")
	smooth := fs.String("smooth", "auto", "smoothing of noisy step series: auto, off, or a window in points")
	// Go's flag package stops at the first positional argument; parse
	// again after each one so flags may follow the directories.
	var dirs []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, reportUsage)
				return exitOK
			}
			return reportUsageError(stderr, "%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(dirs) == 0 {
		return reportUsageError(stderr, "report needs at least one log directory")
	}
	var opts report.Options
	switch strings.ToLower(*logMode) {
	case "auto":
		opts.LogScale = report.LogAuto
	case "on", "true", "yes":
		opts.LogScale = report.LogOn
	case "off", "false", "no":
		opts.LogScale = report.LogOff
	default:
		return reportUsageError(stderr, "-log must be auto, on or off, got %q", *logMode)
	}
	switch sm := strings.ToLower(*smooth); sm {
	case "auto":
	case "off", "0", "none":
		opts.Smooth = -1
	default:
		w, err := strconv.ParseFloat(sm, 64)
		if err != nil || !(w >= 1 && w <= 10000) {
			return reportUsageError(stderr, "-smooth must be auto, off or a window of 1 to 10000 points, got %q", *smooth)
		}
		opts.Smooth = w
	}
	opts.Title = *title
	path := *out
	if path == "" {
		resolved, _, err := report.ResolveDirs(dirs)
		if err != nil {
			fmt.Fprintf(stderr, "volt: %v\n", err)
			return exitError
		}
		path = "volt_report.html"
		if len(resolved) == 1 {
			path = filepath.Join(resolved[0], "report.html")
		}
	}
	res, runs, err := report.WriteFile(path, dirs, opts)
	if err != nil {
		fmt.Fprintf(stderr, "volt: %v\n", err)
		return exitError
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "volt: warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "wrote %s: %d %s, %d %s\n", path, len(runs), reportPlural(len(runs), "run", "runs"), res.Plots, reportPlural(res.Plots, "plot", "plots"))
	return exitOK
}

// reportUsageError reports a wrong "volt report" command line.
func reportUsageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "volt: "+format+"\n\n", args...)
	fmt.Fprint(stderr, reportUsage)
	return exitUsage
}

func reportPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
