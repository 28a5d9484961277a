package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// asMainEnv set to 1 makes the test binary run main (see TestMain).
const asMainEnv = "VAE_AS_MAIN"

// TestMain runs main itself when a test starts this binary as the program,
// so that the tests see its exit status and files.
func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// program runs this program with args in dir, returning its stderr and
// exit status.
func program(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stderr.String(), 0
	case errors.As(err, &ee):
		return stderr.String(), ee.ExitCode()
	}
	t.Fatalf("running the program: %v", err)
	return "", -1
}

// TestVAECommandLine: -h prints the usage and exits 0; -epochs 0 (which
// Lightning reads as no training and volt.Config as 1000 epochs) and a bad
// value are refused with the reason and exit 2; nothing is written.
func TestVAECommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"-h"}, 0, "Usage of "},
		{[]string{"-epochs", "0"}, 2, `invalid value "0" for flag -epochs: 0 trains no epoch in Lightning (max_epochs=0)`},
		{[]string{"-epochs", "x"}, 2, `invalid value "x" for flag -epochs: want a whole number of epochs`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			stderr, code := program(t, dir, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit status %d, want %d; stderr does not say %q or does:\n%s", code, tc.code, tc.want, stderr)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("the program wrote %v", entries)
			}
		})
	}
}

// lightningEpoch0 is the validation loss per test image after the first
// epoch of tools/vae/lightning_vae.py in Lightning 2.2.5 with seeds 42 and 7
// (tools/vae/compare.sh; tools/vae/result.txt has every epoch).
var lightningEpoch0 = [2]float64{128.361, 127.363}

// TestVAETrainsAsLightning: one epoch of the program on all of MNIST ends
// with a validation loss per image within 2% of Lightning's (its two seeds
// are 0.8% apart; a missing KL term, a mean in place of the sum, or noise
// that does not vary with the step miss by far more).
func TestVAETrainsAsLightning(t *testing.T) {
	if testing.Short() {
		t.Skip("an epoch on MNIST (about 20 s on 2 cores)")
	}
	dir := t.TempDir()
	if stderr, code := program(t, dir, "-epochs", "1"); code != 0 {
		t.Fatalf("exit status %d:\n%s", code, stderr)
	}
	f, err := os.Open(filepath.Join(dir, "volt_logs", "version_0", "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	val := math.NaN()
	for _, r := range rows[1:] {
		if v := r[col["val_loss"]]; v != "" {
			val, _ = strconv.ParseFloat(v, 64)
		}
	}
	perImage := val / valBatchWeight(10000, 128)
	lo, hi := 0.98*min(lightningEpoch0[0], lightningEpoch0[1]), 1.02*max(lightningEpoch0[0], lightningEpoch0[1])
	if !(perImage >= lo && perImage <= hi) {
		t.Errorf("val_loss %.1f per image after one epoch, want within [%.1f, %.1f] (Lightning 2.2.5: %v)", perImage, lo, hi, lightningEpoch0)
	}
}

// valBatchWeight is what an epoch's val_loss is per image: each batch of n
// images logs the sum of n losses, and the epoch's value is the batches'
// mean weighted by n, so it is Σn²/Σn times the mean loss of an image.
func valBatchWeight(images, batch int) float64 {
	full, last := images/batch, images%batch
	return float64(full*batch*batch+last*last) / float64(images)
}
