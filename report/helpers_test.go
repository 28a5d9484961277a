package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRunDir writes metrics.csv (and hparams.yaml when not empty) into a
// new directory dir/name and returns its path.
func writeRunDir(t *testing.T, dir, name, csv, hparams string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, MetricsFileName), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	if hparams != "" {
		if err := os.WriteFile(filepath.Join(d, HparamsFileName), []byte(hparams), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// synthCSV returns a realistic metrics.csv like volt's CSV logger writes:
// 3 epochs of 400 steps, train_loss and train_acc_step every 20 steps, a
// learning rate (no stage prefix), train_acc_epoch, val_loss/val_acc for
// two validation loaders at each epoch end, and test_loss/test_acc at the
// end. The loss falls over three decades (log axis); with nan set one
// train_loss is NaN.
func synthCSV(lr float64, nan bool) string {
	cols := []string{"epoch", "lr", "test_acc", "test_loss", "train_acc_epoch", "train_acc_step", "train_loss",
		"val_acc/dataloader_idx_0", "val_acc/dataloader_idx_1", "val_loss/dataloader_idx_0", "val_loss/dataloader_idx_1"}
	var b strings.Builder
	b.WriteString("step," + strings.Join(cols, ",") + "\n")
	row := func(step int, vals map[string]string) {
		b.WriteString(fmt.Sprint(step))
		for _, c := range cols {
			b.WriteString("," + vals[c])
		}
		b.WriteString("\n")
	}
	f := func(v float64) string { return fmt.Sprintf("%.6g", v) }
	const perEpoch, epochs = 400, 3
	noise := func(i int) float64 { return 0.25 * math.Sin(float64(i)*1.7) * math.Cos(float64(i)*0.37) }
	loss := func(step int) float64 { return 2.3*math.Exp(-float64(step)*lr) + 0.002 }
	for e := 0; e < epochs; e++ {
		for s := 19; s < perEpoch; s += 20 {
			step := e*perEpoch + s
			v := map[string]string{
				"epoch":          fmt.Sprint(e),
				"lr":             f(lr * 0.5 * (1 + math.Cos(math.Pi*float64(step)/(perEpoch*epochs)))),
				"train_loss":     f(loss(step) * math.Exp(noise(step))),
				"train_acc_step": f(0.985 - 0.87*math.Exp(-float64(step)*lr*1.5) - 0.03*math.Abs(noise(step))),
			}
			if nan && step == 419 {
				v["train_loss"] = "nan"
			}
			row(step, v)
		}
		end := (e+1)*perEpoch - 1
		row(end, map[string]string{
			"epoch":                     fmt.Sprint(e),
			"val_loss/dataloader_idx_0": f(loss(end) * 1.4),
			"val_loss/dataloader_idx_1": f(loss(end) * 2.1),
			"val_acc/dataloader_idx_0":  f(0.975 - 0.87*math.Exp(-float64(end)*lr*1.4)),
			"val_acc/dataloader_idx_1":  f(0.96 - 0.87*math.Exp(-float64(end)*lr*1.2)),
		})
		row(end, map[string]string{"epoch": fmt.Sprint(e), "train_acc_epoch": f(0.98 - 0.87*math.Exp(-float64(end)*lr*1.45))})
	}
	row(perEpoch*epochs-1, map[string]string{"test_loss": f(loss(1200) * 1.5), "test_acc": f(0.972 - 0.87*math.Exp(-1200*lr*1.3))})
	return b.String()
}

// synthHparams returns an hparams.yaml with a nested map.
func synthHparams(lr float64) string {
	return fmt.Sprintf("lr: %g\nbatch_size: 64\nmodel:\n  hidden: [256, 256]\n  dropout: 0.1\noptimizer: adam\n", lr)
}
