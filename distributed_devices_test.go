package volt_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/engine"
)

// TestDeviceConfigErrors: bad Accelerator and DeviceIDs values are named
// with what would be valid.
func TestDeviceConfigErrors(t *testing.T) {
	t.Setenv(engine.BackendEnvVar, "")
	type badConfig struct {
		name string
		cfg  volt.Config
		want string
	}
	cases := []badConfig{
		{"unknown accelerator", volt.Config{Accelerator: "tpu"}, `Config.Accelerator: unknown "tpu"; valid: "auto"`},
		{"negative gpu", volt.Config{Accelerator: "gpu", DeviceIDs: []int{-1}}, "Config.DeviceIDs[0]: a GPU index must be >= 0"},
		{"gpu twice", volt.Config{DeviceIDs: []int{1, 1}}, "Config.DeviceIDs[1]: GPU 1 is listed twice"},
		{"gpus on the cpu", volt.Config{Accelerator: "cpu", DeviceIDs: []int{0}}, `Config.DeviceIDs lists GPUs [0] but Config.Accelerator is "cpu"`},
		{"gpus and devices disagree", volt.Config{Devices: 3, DeviceIDs: []int{0, 1}}, "Config.DeviceIDs lists 2 GPUs [0 1] but Config.Devices is 3"},
		{"accelerator and backend disagree", volt.Config{Accelerator: "gpu", Backend: "go"}, `Config.Accelerator "gpu" does not agree with Config.Backend "go"`},
	}
	if !engine.XLABuilt {
		cases = append(cases,
			badConfig{"gpu without xla", volt.Config{Accelerator: "gpu"}, "built without GoMLX's XLA backend; build it with `go build -tags xla`"},
			badConfig{"gpus found on no gpu", volt.Config{DeviceIDs: []int{0}}, "Config.DeviceIDs lists GPUs [0] but this process runs on the CPU"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.DisableLoggers = true
			_, err := volt.NewTrainer(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewTrainer: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestNoStartLineAlone: a single process on the CPU, the usual case,
// logs no start line; TestStartLine (internal) checks its words.
func TestNoStartLineAlone(t *testing.T) {
	t.Setenv(engine.BackendEnvVar, "")
	var out bytes.Buffer
	if _, err := volt.NewTrainer(volt.Config{DisableLoggers: true, Log: slog.New(slog.NewTextHandler(&out, nil))}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "GOMAXPROCS") {
		t.Errorf("a single process on the CPU logged:\n%s", out.String())
	}
}
