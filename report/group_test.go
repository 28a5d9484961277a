package report

import (
	"strings"
	"testing"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		full   string
		base   string
		stage  Stage
		level  Level
		loader int
	}{
		{"train_loss", "loss", StageTrain, LevelAuto, -1},
		{"train_loss_step", "loss", StageTrain, LevelStep, -1},
		{"train_loss_epoch", "loss", StageTrain, LevelEpoch, -1},
		{"val_loss", "loss", StageVal, LevelAuto, -1},
		{"val/acc", "acc", StageVal, LevelAuto, -1},
		{"train/acc_epoch", "acc", StageTrain, LevelEpoch, -1},
		{"test_acc", "acc", StageTest, LevelAuto, -1},
		{"val_loss/dataloader_idx_1", "loss", StageVal, LevelAuto, 1},
		{"val_acc_epoch/dataloader_idx_12", "acc", StageVal, LevelEpoch, 12},
		{"lr-Adam", "lr-Adam", StageOther, LevelAuto, -1},
		{"grad_norm_step", "grad_norm", StageOther, LevelStep, -1},
		{"train_", "train_", StageOther, LevelAuto, -1},
		{"validation_f1", "f1", StageVal, LevelAuto, -1},
		{"_step", "_step", StageOther, LevelAuto, -1},
	}
	for _, tt := range tests {
		t.Run(tt.full, func(t *testing.T) {
			n := ParseName(tt.full)
			if n.Base != tt.base || n.Stage != tt.stage || n.Level != tt.level || n.Loader != tt.loader || n.Full != tt.full {
				t.Errorf("ParseName(%q) = %+v, want base %q stage %v level %v loader %d", tt.full, n, tt.base, tt.stage, tt.level, tt.loader)
			}
		})
	}
}

func TestGroupMetrics(t *testing.T) {
	tests := []struct {
		name   string
		csvs   []string
		groups []string // "base: run/metric ..."
	}{
		{
			name: "train val test share a plot",
			csvs: []string{"step,epoch,acc_top5,test_loss,train_loss_epoch,train_loss_step,val_loss\n0,0,1,2,3,4,5\n"},
			groups: []string{
				"loss: 0/train_loss_step 0/train_loss_epoch 0/val_loss 0/test_loss",
				"acc_top5: 0/acc_top5",
			},
		},
		{
			name: "loaders and runs",
			csvs: []string{
				"step,val_acc/dataloader_idx_1,val_acc/dataloader_idx_0,train_acc\n0,1,2,3\n",
				"step,val_acc,lr\n0,1,2\n",
			},
			groups: []string{
				"acc: 0/train_acc 0/val_acc/dataloader_idx_0 0/val_acc/dataloader_idx_1 1/val_acc",
				"lr: 1/lr",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs []*Run
			for _, c := range tt.csvs {
				m, err := ParseMetrics(strings.NewReader(c), "m.csv")
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, &Run{Metrics: m})
			}
			var got []string
			for _, g := range GroupMetrics(runs) {
				s := g.Base + ":"
				for _, l := range g.Lines {
					s += " " + string(rune('0'+l.Run)) + "/" + l.Name.Full
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tt.groups, "\n") {
				t.Errorf("groups\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.groups, "\n"))
			}
		})
	}
}

func TestStyleOf(t *testing.T) {
	many := &Series{Values: make([]float64, 30)}
	two := &Series{Values: make([]float64, 2)}
	one := &Series{Values: make([]float64, 1)}
	tests := []struct {
		name   string
		metric string
		s      *Series
		epochs int
		want   lineStyle
	}{
		{"train step-level", "train_loss", many, 3, styleStep},
		{"explicit step", "train_loss_step", two, 3, styleStep},
		{"explicit epoch", "train_loss_epoch", many, 3, styleEpoch},
		{"val", "val_loss", many, 3, styleEpoch},
		{"one test value", "test_acc", one, 3, styleReference},
		{"several test values", "test_acc", two, 3, styleEpoch},
		{"one value per epoch", "train_acc", two, 2, styleEpoch},
		{"single point", "lr", one, 0, styleEpoch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := styleOf(ParseName(tt.metric), tt.s, tt.epochs); got != tt.want {
				t.Errorf("styleOf(%s) = %v, want %v", tt.metric, got, tt.want)
			}
		})
	}
}
