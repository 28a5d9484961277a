package report

import (
	"regexp"
	"slices"
	"strings"
)

// Stage is the loop a metric was logged in, read from its name's prefix.
type Stage int

// Stages, in legend order.
const (
	StageTrain Stage = iota
	StageVal
	StageTest
	StageOther // no recognised prefix (a learning rate, a gradient norm, …)
)

// String returns the stage's display name.
func (s Stage) String() string {
	switch s {
	case StageTrain:
		return "train"
	case StageVal:
		return "val"
	case StageTest:
		return "test"
	}
	return "other"
}

// Level says how often a metric was logged, read from its name's suffix.
type Level int

// Levels.
const (
	LevelAuto  Level = iota // no suffix: decided from the stage and the data
	LevelStep               // "_step": one value per logged step
	LevelEpoch              // "_epoch": one value per epoch
)

// MetricName is a metric name split into its parts.
type MetricName struct {
	Full   string // as logged, e.g. "val_loss/dataloader_idx_1"
	Base   string // without stage, level and loader, e.g. "loss"
	Stage  Stage
	Level  Level
	Loader int // the N of a "/dataloader_idx_N" suffix; -1 without one
}

var loaderSuffix = regexp.MustCompile(`/dataloader_idx_(\d+)$`)

// stagePrefixes maps name prefixes to stages; longer prefixes first.
var stagePrefixes = []struct {
	prefix string
	stage  Stage
}{
	{"validation_", StageVal}, {"validation/", StageVal},
	{"train_", StageTrain}, {"train/", StageTrain},
	{"valid_", StageVal}, {"valid/", StageVal},
	{"test_", StageTest}, {"test/", StageTest},
	{"val_", StageVal}, {"val/", StageVal},
}

// ParseName splits a metric name into stage, base, level and loader:
// "train_loss_step" is the step-level train series of "loss",
// "val/acc/dataloader_idx_1" the validation "acc" of the second loader.
func ParseName(full string) MetricName {
	n := MetricName{Full: full, Stage: StageOther, Loader: -1}
	rest := full
	if m := loaderSuffix.FindStringSubmatchIndex(rest); m != nil {
		idx := 0
		for _, c := range rest[m[2]:m[3]] {
			idx = idx*10 + int(c-'0')
			if idx > 1<<20 {
				break
			}
		}
		n.Loader = idx
		rest = rest[:m[0]]
	}
	for _, p := range stagePrefixes {
		if s, ok := strings.CutPrefix(rest, p.prefix); ok && s != "" {
			n.Stage, rest = p.stage, s
			break
		}
	}
	if s, ok := strings.CutSuffix(rest, "_step"); ok && s != "" {
		n.Level, rest = LevelStep, s
	} else if s, ok := strings.CutSuffix(rest, "_epoch"); ok && s != "" {
		n.Level, rest = LevelEpoch, s
	}
	n.Base = rest
	return n
}

// Line is one series of one run drawn in a plot.
type Line struct {
	Run    int // index of the run
	Name   MetricName
	Series *Series
}

// Group is the series sharing a base metric name: one plot.
type Group struct {
	Base  string
	Lines []Line
}

// GroupMetrics groups the metrics of runs by base name, one Group per plot.
// Groups whose base mentions "loss" come first, then the rest by name;
// within a group lines are ordered by run, stage, loader and level.
func GroupMetrics(runs []*Run) []Group {
	byBase := map[string]*Group{}
	var order []string
	for ri, r := range runs {
		for _, name := range r.Metrics.Names {
			mn := ParseName(name)
			g := byBase[mn.Base]
			if g == nil {
				g = &Group{Base: mn.Base}
				byBase[mn.Base] = g
				order = append(order, mn.Base)
			}
			g.Lines = append(g.Lines, Line{Run: ri, Name: mn, Series: r.Metrics.Series[name]})
		}
	}
	slices.SortFunc(order, func(a, b string) int {
		la, lb := strings.Contains(a, "loss"), strings.Contains(b, "loss")
		if la != lb {
			if la {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	groups := make([]Group, 0, len(order))
	for _, base := range order {
		g := byBase[base]
		slices.SortStableFunc(g.Lines, func(a, b Line) int {
			if a.Run != b.Run {
				return a.Run - b.Run
			}
			if a.Name.Stage != b.Name.Stage {
				return int(a.Name.Stage - b.Name.Stage)
			}
			if a.Name.Loader != b.Name.Loader {
				return a.Name.Loader - b.Name.Loader
			}
			if a.Name.Level != b.Name.Level {
				return int(a.Name.Level - b.Name.Level)
			}
			return strings.Compare(a.Name.Full, b.Name.Full)
		})
		groups = append(groups, *g)
	}
	return groups
}

// lineStyle is how a line is drawn.
type lineStyle int

const (
	styleStep      lineStyle = iota // a thin line, no markers
	styleEpoch                      // a line with markers
	styleReference                  // a horizontal reference line with a marker
)

// styleOf decides how a series is drawn: step-level series as a thin line,
// epoch-level ones (validation, "_epoch", or as few values as epochs) with
// markers, a single test value as a horizontal reference.
func styleOf(n MetricName, s *Series, epochs int) lineStyle {
	switch {
	case n.Stage == StageTest && s.Len() == 1:
		return styleReference
	case n.Level == LevelStep:
		return styleStep
	case n.Level == LevelEpoch, n.Stage == StageVal, n.Stage == StageTest:
		return styleEpoch
	case s.Len() <= 2 || (epochs > 0 && s.Len() <= epochs):
		return styleEpoch
	}
	return styleStep
}

// direction tells whether smaller or larger values of a metric are better,
// from its base name: -1 smaller (loss, error), +1 larger (accuracy, F1),
// 0 unknown.
func direction(base string) int {
	b := strings.ToLower(base)
	for _, w := range []string{"loss", "err", "mse", "mae", "rmse", "perplexity", "ppl", "nll", "wer", "cer"} {
		if strings.Contains(b, w) {
			return -1
		}
	}
	for _, w := range []string{"acc", "f1", "auc", "auroc", "precision", "recall", "iou", "dice", "bleu", "rouge", "map", "r2"} {
		if strings.Contains(b, w) {
			return 1
		}
	}
	return 0
}
