package callback_test

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// barModule logs only scripted values: "score" (1, 2, 3, … per epoch) at
// every training batch and "val_score" (10 × epoch) at validation, both to
// the progress bar.
type barModule struct{ boring }

func (m *barModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.Forward(s, b.Input(0))})
}

func (m *barModule) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	t.Log("score", float64(t.CurrentEpoch()+1), volt.ProgBar)
	return nil
}

func (m *barModule) OnValidationEpochEnd(t *volt.Trainer) error {
	t.Log("val_score", float64(10*t.CurrentEpoch()), volt.ProgBar)
	return nil
}

func TestProgressBarPlainLines(t *testing.T) {
	tests := []struct {
		name  string
		cfg   volt.Config
		every int
		want  string
	}{
		{"epoch lines", volt.Config{MaxEpochs: 2}, 0,
			"epoch 0 step 4 score=1 val_score=0\n" +
				"epoch 1 step 8 score=2 val_score=10\n"},
		{"every 3 steps", volt.Config{MaxEpochs: 2}, 3,
			"epoch 0 batch 3/4 step 3 score=1\n" +
				"epoch 0 step 4 score=1 val_score=0\n" +
				"epoch 1 batch 2/4 step 6 score=2 val_score=0\n" +
				"epoch 1 step 8 score=2 val_score=10\n"},
		{"accumulation: one line per step", volt.Config{MaxEpochs: 1, AccumulateGradBatches: 2}, 1,
			"epoch 0 batch 2/4 step 1 score=1\n" +
				"epoch 0 batch 4/4 step 2 score=1\n" +
				"epoch 0 step 2 score=1 val_score=0\n"},
		{"no epoch limit", volt.Config{MaxEpochs: -1, MaxSteps: 4}, 0,
			"epoch 0 step 4 score=1 val_score=0\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			pb := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out, Every: tc.every})
			if _, err := fit(t, quiet(tc.cfg), &barModule{}, boringData(), pb); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tc.want)
			}
			if strings.ContainsAny(out.String(), "\x1b\r") {
				t.Errorf("plain output has control characters: %q", out.String())
			}
		})
	}
}

// TestProgressBarTerminal runs each loop with a bar on a terminal of 80
// columns and a clock that stands still, renders what it wrote as a
// terminal would (screen) and compares the screen: Lightning's lines, the
// training bar reset at each epoch and left at the end, the sanity check and
// validation bars below it cleared, evaluation runs' bars left.
func TestProgressBarTerminal(t *testing.T) {
	bar := func(n int) string { return strings.Repeat("█", n) }
	tests := []struct {
		name string
		run  func(t *testing.T, tr *volt.Trainer) error
		want []string
	}{
		{"fit", func(t *testing.T, tr *volt.Trainer) error { return tr.Fit(t.Context(), &barModule{}, boringData()) },
			[]string{"Epoch 1: 100%|" + bar(14) + "| 4/4 [00:00<?, ?it/s, score=2.000, val_score=10.00]"}},
		{"validate", func(t *testing.T, tr *volt.Trainer) error {
			_, err := tr.Validate(t.Context(), &boring{}, boringData())
			return err
		}, []string{"Validation DataLoader 0: 100%|" + bar(28) + "| 1/1 [00:00<?, ?it/s]"}},
		{"test", func(t *testing.T, tr *volt.Trainer) error {
			_, err := tr.Test(t.Context(), &boring{}, boringData())
			return err
		}, []string{"Testing DataLoader 0: 100%|" + bar(31) + "| 2/2 [00:00<?, ?it/s]"}},
		{"predict", func(t *testing.T, tr *volt.Trainer) error {
			_, err := tr.Predict(t.Context(), &boring{}, boringData())
			return err
		}, []string{"Predicting DataLoader 0: 100%|" + bar(28) + "| 2/2 [00:00<?, ?it/s]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			pb := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out, ForceTerminal: volt.Ptr(true), Columns: 80})
			callback.SetProgressBarClock(pb, func() time.Time { return time.Unix(0, 0) })
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{pb}}))
			if err := tc.run(t, tr); err != nil {
				t.Fatal(err)
			}
			got, wraps := screen(out.String(), 80)
			if wraps > 0 || !slices.Equal(got, tc.want) {
				t.Errorf("screen (%d wrapped lines):\n%s\nwant:\n%s\nwritten: %q", wraps, strings.Join(got, "\n"), strings.Join(tc.want, "\n"), out.String())
			}
		})
	}
}

// screen renders what a program wrote to a terminal of width columns (\r,
// \n as the terminal's onlcr makes it, ESC[1A, ESC[2K, ESC[K) and returns
// the lines without trailing blanks or empty last lines, and how many times
// a line ran past the width and wrapped.
func screen(s string, width int) (lines []string, wraps int) {
	rows := [][]rune{nil}
	row, col := 0, 0
	put := func(r rune) {
		if col >= width {
			wraps++
			row, col = row+1, 0
		}
		for len(rows) <= row {
			rows = append(rows, nil)
		}
		for len(rows[row]) <= col {
			rows[row] = append(rows[row], ' ')
		}
		rows[row][col] = r
		col++
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "\x1b[1A"):
			row, i = max(row-1, 0), i+4
		case strings.HasPrefix(s[i:], "\x1b[2K"):
			if row < len(rows) {
				rows[row] = nil
			}
			i += 4
		case strings.HasPrefix(s[i:], "\x1b[K"):
			if row < len(rows) && col < len(rows[row]) {
				rows[row] = rows[row][:col]
			}
			i += 3
		case s[i] == '\r':
			col, i = 0, i+1
		case s[i] == '\n':
			row, col, i = row+1, 0, i+1
			for len(rows) <= row {
				rows = append(rows, nil)
			}
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			put(r)
			i += n
		}
	}
	for _, r := range rows {
		lines = append(lines, strings.TrimRight(string(r), " "))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, wraps
}

func TestProgressBarNotATerminal(t *testing.T) {
	// A bytes.Buffer has no file descriptor: plain lines without ForceTerminal.
	var out bytes.Buffer
	pb := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out})
	if _, err := fit(t, quiet(volt.Config{MaxEpochs: 1}), &boring{}, boringData(), pb); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "epoch 0 step 4 train_loss=") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("output %q", out.String())
	}
}

func TestProgressBarConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  callback.ProgressBarConfig
		want string
	}{
		{callback.ProgressBarConfig{RefreshInterval: -time.Second}, "ProgressBarConfig.RefreshInterval: must be >= 0 (0 means 100ms), got -1s"},
		{callback.ProgressBarConfig{Every: -2}, "ProgressBarConfig.Every: must be >= 0"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if err := callback.NewProgressBar(tc.cfg).Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestProgressBarTerminalStoppedEarly(t *testing.T) {
	// MaxSteps stops the epoch after 2 of its 4 batches: the bar ends at 2/4,
	// not filled up to 4/4.
	var out bytes.Buffer
	pb := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out, ForceTerminal: volt.Ptr(true)})
	if _, err := fit(t, quiet(volt.Config{MaxEpochs: 1, MaxSteps: 2}), &boring{}, boringData(), pb); err != nil {
		t.Fatal(err)
	}
	got, _ := screen(out.String(), 80)
	if len(got) != 1 || !strings.HasPrefix(got[0], "Epoch 0:  50%|") || !strings.Contains(got[0], "| 2/4 [") || !strings.HasSuffix(out.String(), "\n") {
		t.Errorf("screen %q, want the bar left at 2/4 on its own line", got)
	}
}

// TestProgressBarRedrawsOnTimeBudget runs Fit (1 epoch) and Test with n
// batches in each of training, validation and test, counting the writes to
// the terminal: with a clock that stands still, the bars are drawn only when
// they open and in their final state, so the count does not grow with n
// (a redraw per batch would add one write per batch at least); with a clock
// that moves 1 s per reading, every batch redraws.
func TestProgressBarRedrawsOnTimeBudget(t *testing.T) {
	writes := func(t *testing.T, n int, tick time.Duration) (int, string) {
		var out countingBuffer
		pb := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out, ForceTerminal: volt.Ptr(true)})
		clock := time.Unix(0, 0)
		callback.SetProgressBarClock(pb, func() time.Time { clock = clock.Add(tick); return clock })
		loader := func(seed uint64) *data.DataLoader {
			return &data.DataLoader{Dataset: regression(n, seed), BatchSize: 1}
		}
		dm := volt.Loaders{Train: loader(1), Val: []data.Loader{loader(2)}, Test: []data.Loader{loader(3)}}
		tr, err := fit(t, quiet(volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0), DisableModelSummary: true}), &boring{}, dm, pb)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Test(t.Context(), &boring{}, dm); err != nil {
			t.Fatal(err)
		}
		return out.writes, out.String()
	}
	const few, many = 4, 40
	tests := []struct {
		name        string
		tick        time.Duration
		minExtra    int // least writes that many batches add to few batches
		maxExtra    int // most writes that many batches add to few batches
		finalStates []string
	}{
		{"clock stands still", 0, 0, 0, []string{"| 40/40 [", "Testing DataLoader 0: 100%"}},
		{"clock moves 1s per reading", time.Second, 3 * (many - few), 1 << 30, []string{"| 40/40 [", "Testing DataLoader 0: 100%"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nFew, _ := writes(t, few, tc.tick)
			nMany, out := writes(t, many, tc.tick)
			if extra := nMany - nFew; extra < tc.minExtra || extra > tc.maxExtra {
				t.Errorf("%d batches each: %d writes, %d batches each: %d writes; want %d more to %d more",
					many, nMany, few, nFew, tc.minExtra, tc.maxExtra)
			}
			for _, w := range tc.finalStates {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks the final state %q:\n%q", w, out)
				}
			}
		})
	}
}

// countingBuffer keeps what it is written and counts the writes (it has
// only Write, so every write goes through it).
type countingBuffer struct {
	buf    bytes.Buffer
	writes int
}

func (b *countingBuffer) Write(p []byte) (int, error) {
	b.writes++
	return b.buf.Write(p)
}

func (b *countingBuffer) String() string { return b.buf.String() }

// orderModule logs "train_loss" then "a_metric" in every training step and
// "val_loss" in validation, all to the progress bar: the script of
// Lightning 2.2.5 whose bar shows "train_loss=…, a_metric=…, val_loss=…"
// (logging order; sorted by name a_metric would come first).
type orderModule struct{ boring }

func (m *orderModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.Forward(s, b.Input(0))})
	s.Log("train_loss", l, volt.ProgBar)
	s.Log("a_metric", graph.OnesLike(l), volt.ProgBar)
	return l
}

func (m *orderModule) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.Forward(s, b.Input(0))}), volt.ProgBar)
}

// TestProgressBarLoggingOrder: the plain lines list the progress bar's
// values in the order they were first logged, as Lightning's bar does.
func TestProgressBarLoggingOrder(t *testing.T) {
	var out bytes.Buffer
	pb := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out})
	if _, err := fit(t, quiet(volt.Config{MaxEpochs: 1}), &orderModule{}, boringData(), pb); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^epoch 0 step 4 train_loss=\S+ a_metric=1 val_loss=\S+\n$`)
	if !want.MatchString(out.String()) {
		t.Errorf("output %q; want it to match %s", out.String(), want)
	}
}
