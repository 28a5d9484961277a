package volt_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/simdcheck"
)

// TestNewTrainerWarnsOnceWithoutSIMD checks that NewTrainer, in a program
// built without GOEXPERIMENT=simd, warns once per process whatever the
// number of trainers, and not on another backend than Go's
// (internal/simdcheck tests the build tag with real builds).
func TestNewTrainerWarnsOnceWithoutSIMD(t *testing.T) {
	t.Setenv(simdcheck.SilenceEnv, "")
	defer simdcheck.SetBuiltWithoutForTest(true)()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	for range 2 {
		if _, err := volt.NewTrainer(volt.Config{DisableLoggers: true, Accelerator: "cpu", Log: log}); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "built without GOEXPERIMENT=simd"); n != 1 {
		t.Errorf("two trainers warned %d times, want once:\n%s", n, buf.String())
	}
}
