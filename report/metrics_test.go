package report

import (
	"math"
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	type pt struct {
		step, value float64
	}
	tests := []struct {
		name    string
		csv     string
		rows    int
		names   []string
		series  map[string][]pt
		epochs  []float64
		wantErr string
	}{
		{
			name:   "empty cells",
			csv:    "step,epoch,train_loss,val_loss\n0,0,1.5,\n1,0,1.25,\n1,0,,2\n",
			rows:   3,
			names:  []string{"train_loss", "val_loss"},
			series: map[string][]pt{"train_loss": {{0, 1.5}, {1, 1.25}}, "val_loss": {{1, 2}}},
			epochs: []float64{1},
		},
		{
			name:   "nan and inf",
			csv:    "step,loss\n0,nan\n1,inf\n2,-inf\n3,0.5\n",
			rows:   4,
			names:  []string{"loss"},
			series: map[string][]pt{"loss": {{0, math.NaN()}, {1, math.Inf(1)}, {2, math.Inf(-1)}, {3, 0.5}}},
		},
		{
			name:   "header widened mid-file",
			csv:    "step,epoch,a\n0,0,1\nstep,epoch,a,b\n1,0,2,3\n",
			rows:   2,
			names:  []string{"a", "b"},
			series: map[string][]pt{"a": {{0, 1}, {1, 2}}, "b": {{1, 3}}},
			epochs: []float64{1},
		},
		{
			name:   "short rows padded",
			csv:    "step,a,b\n0,1\n1,2,3\n",
			rows:   2,
			names:  []string{"a", "b"},
			series: map[string][]pt{"a": {{0, 1}, {1, 2}}, "b": {{1, 3}}},
		},
		{
			name:   "epochs tracked, rows without epoch ignored",
			csv:    "step,epoch,a\n9,0,1\n19,1,2\n19,,3\n",
			rows:   3,
			names:  []string{"a"},
			series: map[string][]pt{"a": {{9, 1}, {19, 2}, {19, 3}}},
			epochs: []float64{9, 19},
		},
		{name: "the test row after Fit (epoch = the epoch count) is no epoch",
			csv:  "step,epoch,train_loss,val_loss,test_loss\n9,0,1,,\n9,0,,2,\n19,1,3,,\n19,1,,4,\n19,2,,,5\n",
			rows: 5, names: []string{"test_loss", "train_loss", "val_loss"},
			series: map[string][]pt{"test_loss": {{19, 5}}}, epochs: []float64{9, 19}},
		{name: "header only", csv: "step,epoch,loss\n", rows: 0},
		{name: "byte order mark", csv: "\ufeffstep,a\n0,1\n", rows: 1, names: []string{"a"}, series: map[string][]pt{"a": {{0, 1}}}},
		{name: "empty file", csv: "", wantErr: "m.csv is empty"},
		{name: "no step column", csv: "epoch,a\n0,1\n", wantErr: `header starts with "epoch", want "step"`},
		{name: "too many cells", csv: "step,a\n0,1,2\n", wantErr: "m.csv:2: row has 3 cells but the header has 2 columns"},
		{name: "bad value", csv: "step,a\n0,x\n", wantErr: `m.csv:2: column "a": "x" is not a number`},
		{name: "bad step", csv: "step,a\nfoo,1\n", wantErr: `step "foo" is not a number`},
		{name: "duplicate column", csv: "step,a,a\n", wantErr: `names column "a" twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMetrics(strings.NewReader(tt.csv), "m.csv")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Rows != tt.rows {
				t.Errorf("rows %d, want %d", m.Rows, tt.rows)
			}
			if strings.Join(m.Names, ",") != strings.Join(tt.names, ",") {
				t.Errorf("names %v, want %v", m.Names, tt.names)
			}
			for name, want := range tt.series {
				s := m.Series[name]
				if s == nil || s.Len() != len(want) {
					t.Fatalf("series %s = %+v, want %v", name, s, want)
				}
				for i, p := range want {
					same := s.Values[i] == p.value || (math.IsNaN(s.Values[i]) && math.IsNaN(p.value))
					if s.Steps[i] != p.step || !same {
						t.Errorf("%s[%d] = (%v, %v), want (%v, %v)", name, i, s.Steps[i], s.Values[i], p.step, p.value)
					}
				}
			}
			if len(m.EpochEnds) != len(tt.epochs) {
				t.Fatalf("epoch ends %v, want %v", m.EpochEnds, tt.epochs)
			}
			for i := range tt.epochs {
				if m.EpochEnds[i] != tt.epochs[i] {
					t.Errorf("epoch ends %v, want %v", m.EpochEnds, tt.epochs)
				}
			}
		})
	}
}

func TestSeriesNonFinite(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(synthCSV(0.002, true)), "synth")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Series["train_loss"].NonFinite(); got != 1 {
		t.Errorf("train_loss NonFinite = %d, want 1", got)
	}
	if m.Epochs() != 3 || m.MaxStep != 1199 {
		t.Errorf("epochs %d, max step %v; want 3 and 1199", m.Epochs(), m.MaxStep)
	}
}
