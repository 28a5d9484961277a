package main

import (
	"bytes"
	"context"
	"github.com/voltml/volt/examples/internal/digits"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt/cli"
)

// run runs the program with args in dir, returning its stdout.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--trainer.default_root_dir="+dir)
	err := cli.Run(context.Background(), digits.NewMLP, newMNIST, cli.WithDefaultConfig("configs/mnist.yaml", defaults),
		cli.WithArgs(args...), cli.WithOutput(&out, &errOut), cli.WithEnvPrefix(""))
	if err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// TestFitThenTest trains 120 steps on real MNIST from the built-in
// config, then tests the checkpoint that model_checkpoint saved, as a user
// would in two commands.
func TestFitThenTest(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "fit", "--trainer.max_epochs=1", "--trainer.limit_train_batches=120", "--trainer.limit_val_batches=20")
	ckpts, err := filepath.Glob(filepath.Join(dir, "volt_logs", "version_0", "checkpoints", "epoch=0-val_acc=*.ckpt"))
	if err != nil || len(ckpts) != 1 {
		t.Fatalf("checkpoints %v (%v); want one named by model_checkpoint's filename template", ckpts, err)
	}
	out := run(t, dir, "test", "--ckpt-path", ckpts[0], "--trainer.disable_loggers", "--trainer.callbacks=[]")
	value, ok := strings.CutPrefix(strings.Split(out, "\n")[0], "test_acc=")
	acc, err := strconv.ParseFloat(value, 64)
	if !ok || err != nil {
		t.Fatalf("test printed %q; want test_acc=… first", out)
	}
	// 120 Adam steps already get well past chance (0.1).
	if acc < 0.8 {
		t.Errorf("test_acc=%v after 120 steps, want >= 0.8", acc)
	}
}

// TestConfigFile checks configs/mnist.yaml is what the program runs with
// when nothing else is given.
func TestConfigFile(t *testing.T) {
	out := run(t, t.TempDir(), "print-config")
	for _, want := range []string{"  max_epochs: 3\n", "  hidden: [256, 256]\n", "  lr: 0.001\n", "  batch_size: 64\n", "seed_everything: 42\n", "      monitor: val_acc\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("print-config lacks %q:\n%s", want, out)
		}
	}
}
