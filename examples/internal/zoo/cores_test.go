package zoo

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/voltml/volt"
)

// bitsSteps is how many steps TestBitsDoNotDependOnCores trains.
const bitsSteps = 4

// TestMain lets the test binary train one model and print the SHA-256 of
// its variables (-bits NAME), for TestBitsDoNotDependOnCores.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "-bits" {
		sum, err := trainedBits(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(sum)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestBitsDoNotDependOnCores: every zoo model trained bitsSteps steps on
// volt's default backend, and on the Go backend's two modes, ends with the
// same bits in every variable (weights and optimizer state) at GOMAXPROCS
// 1 and 3, each in a fresh process (the Go backend sizes its workers when
// it starts). A run
// resumed on a machine with another number of cores must follow the
// uninterrupted run's path, so no op may sum in an order that follows the
// core count.
func TestBitsDoNotDependOnCores(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"", "go:ops_sequential", "go"} {
		for _, m := range Models {
			t.Run(m.Name+"/backend="+backend, func(t *testing.T) {
				t.Parallel()
				testBitsAtOneAndThreeCores(t, self, m.Name, backend)
			})
		}
	}
}

// testBitsAtOneAndThreeCores trains the model called name in two processes,
// at GOMAXPROCS 1 and 3 on backend ("" for volt's default), and compares
// their variables' bits.
func testBitsAtOneAndThreeCores(t *testing.T, self, name, backend string) {
	var sums []string
	for _, procs := range []string{"1", "3"} {
		cmd := exec.Command(self, "-bits", name)
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+procs, "GOMLX_BACKEND="+backend)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%s: %v\n%s", procs, err, exitStderr(err))
		}
		sums = append(sums, strings.TrimSpace(string(out)))
	}
	if sums[0] != sums[1] {
		t.Errorf("variables after %d steps: %s at GOMAXPROCS=1, %s at 3", bitsSteps, sums[0], sums[1])
	}
}

// trainedBits trains the model called name bitsSteps steps and returns
// the SHA-256 of its variables' names and bits, in name order.
func trainedBits(name string) (string, error) {
	m, err := Named(name)
	if err != nil {
		return "", err
	}
	volt.SeedEverything(3)
	t, err := volt.NewTrainer(m.QuietConfig()) // one epoch of bitsSteps batches
	if err != nil {
		return "", err
	}
	train := m.Loader(bitsSteps, rand.New(rand.NewPCG(5, 6)))
	if err := t.Fit(context.Background(), m.Module(), volt.Loaders{Train: train}); err != nil {
		return "", err
	}
	values := map[string][]byte{}
	for v := range t.Store().IterVariables() {
		value, err := v.Value()
		if err != nil {
			return "", err
		}
		if err := value.ConstBytes(func(b []byte) { values[v.Path()] = slices.Clone(b) }); err != nil {
			return "", err
		}
	}
	h := sha256.New()
	for _, path := range slices.Sorted(maps.Keys(values)) {
		_ = binary.Write(h, binary.LittleEndian, int64(len(path)))
		h.Write([]byte(path))
		h.Write(values[path])
	}
	return fmt.Sprintf("%d variables, sha256 %x", len(values), h.Sum(nil)), nil
}

// exitStderr returns what a failed command wrote to its standard error.
func exitStderr(err error) string {
	if exit, ok := err.(*exec.ExitError); ok {
		return string(exit.Stderr)
	}
	return ""
}
