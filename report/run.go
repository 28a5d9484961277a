package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// File names read from a version directory; they match package logger's.
const (
	MetricsFileName = "metrics.csv"
	HparamsFileName = "hparams.yaml"
)

// Run is one version directory of a training run.
type Run struct {
	Name    string         // short name shown in legends and tables
	Dir     string         // the version directory
	Metrics *Metrics       // parsed metrics.csv
	Hparams map[string]any // parsed hparams.yaml; nil when there is none
	// LRFind is the learning-rate finder's curve (lr_find.csv); nil when
	// the run has none.
	LRFind *LRCurve
	// Notes are problems worth showing, such as an unreadable hparams.yaml.
	Notes []string
}

// ResolveDirs expands the command-line arguments to version directories.
// An argument is a version directory (it holds metrics.csv or TensorBoard
// event files), a metrics.csv file, or a parent such as volt_logs/ whose
// version_* subdirectories (any subdirectory holding either) are all taken,
// version_N in numeric order. Subdirectories with neither are reported in
// skipped.
func ResolveDirs(args []string) (dirs, skipped []string, err error) {
	if len(args) == 0 {
		return nil, nil, errors.New("report: no log directory given")
	}
	seen := map[string]bool{}
	add := func(d string) {
		key := d
		if abs, err := filepath.Abs(d); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			dirs = append(dirs, d)
		}
	}
	for _, arg := range args {
		arg = filepath.Clean(arg)
		info, err := os.Stat(arg)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, fmt.Errorf("report: %s does not exist", arg)
			}
			return nil, nil, fmt.Errorf("report: %w", err)
		}
		if !info.IsDir() {
			if filepath.Base(arg) == MetricsFileName {
				add(filepath.Dir(arg))
				continue
			}
			return nil, nil, fmt.Errorf("report: %s is a file; give a log directory holding %s", arg, MetricsFileName)
		}
		if hasRunFiles(arg) {
			add(arg)
			continue
		}
		subs, skip, err := versionSubdirs(arg)
		if err != nil {
			return nil, nil, err
		}
		if len(subs) == 0 {
			msg := fmt.Sprintf("report: no %s or TensorBoard event file in %s, and no version_* subdirectory holds one", MetricsFileName, arg)
			if isDir(filepath.Join(arg, "volt_logs")) {
				msg += fmt.Sprintf(" (did you mean %s?)", filepath.Join(arg, "volt_logs"))
			}
			return nil, nil, errors.New(msg)
		}
		for _, s := range subs {
			add(s)
		}
		skipped = append(skipped, skip...)
	}
	return dirs, skipped, nil
}

// versionSubdirs lists the subdirectories of parent holding metrics.csv,
// and the version_* ones that do not.
func versionSubdirs(parent string) (dirs, skipped []string, err error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if hasRunFiles(filepath.Join(parent, e.Name())) {
			names = append(names, e.Name())
		} else if strings.HasPrefix(e.Name(), "version_") {
			skipped = append(skipped, filepath.Join(parent, e.Name()))
		}
	}
	slices.SortFunc(names, compareVersionNames)
	for _, n := range names {
		dirs = append(dirs, filepath.Join(parent, n))
	}
	return dirs, skipped, nil
}

// compareVersionNames orders version_N names numerically, before any other
// name; other names sort as strings.
func compareVersionNames(a, b string) int {
	na, aok := versionNumber(a)
	nb, bok := versionNumber(b)
	switch {
	case aok && bok:
		return na - nb
	case aok:
		return -1
	case bok:
		return 1
	}
	return strings.Compare(a, b)
}

// versionNumber returns N for "version_N".
func versionNumber(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "version_")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// isFile reports whether path is a regular file (after symlinks).
func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// isDir reports whether path is a directory (after symlinks).
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// LoadRun reads dir/metrics.csv and, when present, dir/hparams.yaml and
// dir/lr_find.csv. A run logged to TensorBoard only is read from its event
// files instead (the scalars, and the hparams plugin's values when there is
// no hparams.yaml). A directory with neither is an error naming it; a
// missing hparams.yaml or lr_find.csv is not, and a malformed one becomes a
// note.
func LoadRun(dir string) (*Run, error) {
	path := filepath.Join(dir, MetricsFileName)
	var run *Run
	var tbHparams map[string]any
	switch f, err := os.Open(path); {
	case errors.Is(err, fs.ErrNotExist) && len(eventFiles(dir)) > 0:
		m, h, notes, err := loadEvents(dir)
		if err != nil {
			return nil, err
		}
		run = &Run{Name: filepath.Base(dir), Dir: dir, Metrics: m, Notes: notes}
		tbHparams = h
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("report: no %s or TensorBoard event file in %s", MetricsFileName, dir)
	case err != nil:
		return nil, fmt.Errorf("report: %w", err)
	default:
		defer f.Close()
		m, err := ParseMetrics(f, path)
		if err != nil {
			return nil, err
		}
		run = &Run{Name: filepath.Base(dir), Dir: dir, Metrics: m}
	}
	hp := filepath.Join(dir, HparamsFileName)
	switch b, err := os.ReadFile(hp); {
	case errors.Is(err, fs.ErrNotExist):
		run.Hparams = tbHparams
	case err != nil:
		run.Notes = append(run.Notes, fmt.Sprintf("%s could not be read: %v", HparamsFileName, err))
	default:
		var h map[string]any
		if err := yaml.Unmarshal(b, &h); err != nil {
			run.Notes = append(run.Notes, fmt.Sprintf("%s is not a YAML mapping: %v", HparamsFileName, err))
		} else if h == nil {
			h = map[string]any{}
		}
		run.Hparams = h
	}
	lr := filepath.Join(dir, LRFindFileName)
	switch f, err := os.Open(lr); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		run.Notes = append(run.Notes, fmt.Sprintf("%s could not be read: %v", LRFindFileName, err))
	default:
		c, err := ParseLRCurve(f, lr)
		f.Close()
		if err != nil {
			run.Notes = append(run.Notes, "learning-rate finder curve left out: "+err.Error())
		} else {
			run.LRFind = &c
		}
	}
	return run, nil
}

// Load resolves args (see ResolveDirs), loads every run and names the runs
// by the shortest parts of their paths that tell them apart.
func Load(args []string) (runs []*Run, skipped []string, err error) {
	dirs, skipped, err := ResolveDirs(args)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range dirs {
		r, err := LoadRun(d)
		if err != nil {
			return nil, nil, err
		}
		runs = append(runs, r)
	}
	names := RunNames(dirs)
	for i, r := range runs {
		r.Name = names[i]
	}
	return runs, skipped, nil
}

// RunNames returns short, distinct display names for directories: the
// path components that differ between them. One directory is named by its
// base name; /a/rep1/volt_logs/version_0 and /a/rep2/volt_logs/version_0
// become "rep1" and "rep2"; version_0 and version_1 of one parent become
// "version_0" and "version_1".
func RunNames(dirs []string) []string {
	names := make([]string, len(dirs))
	if len(dirs) == 1 {
		names[0] = filepath.Base(dirs[0])
		return names
	}
	parts := make([][]string, len(dirs))
	sameLen := true
	for i, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		parts[i] = strings.Split(filepath.ToSlash(d), "/")
		sameLen = sameLen && len(parts[i]) == len(parts[0])
	}
	if sameLen {
		// Keep the positions where the paths differ.
		var keep []int
		for j := range parts[0] {
			for _, p := range parts[1:] {
				if p[j] != parts[0][j] {
					keep = append(keep, j)
					break
				}
			}
		}
		for i, p := range parts {
			var sel []string
			for _, j := range keep {
				sel = append(sel, p[j])
			}
			names[i] = strings.Join(sel, "/")
		}
	} else {
		// Drop the common leading components.
		common := 0
	outer:
		for ; common < len(parts[0]); common++ {
			for _, p := range parts[1:] {
				if common >= len(p)-1 || common >= len(parts[0])-1 || p[common] != parts[0][common] {
					break outer
				}
			}
		}
		for i, p := range parts {
			names[i] = strings.Join(p[common:], "/")
		}
	}
	for i := range names {
		if names[i] == "" {
			names[i] = filepath.Base(dirs[i])
		}
	}
	// Paths that are equal (the same directory under two spellings) still
	// need distinct names.
	count := map[string]int{}
	for i, n := range names {
		count[n]++
		if count[n] > 1 {
			names[i] = fmt.Sprintf("%s (%d)", n, count[n])
		}
	}
	return names
}
