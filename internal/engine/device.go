package engine

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The accelerators of Config.Accelerator.
const (
	AcceleratorAuto = "auto" // gpu when an XLA build finds a GPU plugin, else cpu
	AcceleratorCPU  = "cpu"  // GoMLX's pure-Go backend
	AcceleratorGPU  = "gpu"  // GoMLX's XLA backend with a CUDA (or ROCm) PJRT plugin
)

// Placement is where one process runs its programs: the accelerator and
// the backend configuration handed to Backend.
type Placement struct {
	// Accelerator is AcceleratorCPU or AcceleratorGPU.
	Accelerator string
	// Backend is the backend configuration ("go:ops_sequential",
	// "xla:cuda,visible_devices=1", …).
	Backend string
	// GPU is the index of the GPU this process uses (-1 on the CPU).
	GPU int
}

// String describes the placement for volt's start line, e.g. "cpu (go
// backend, ops_sequential)" or "gpu 1 (xla backend, plugin cuda)".
func (p Placement) String() string {
	if p.Accelerator == AcceleratorGPU {
		return fmt.Sprintf("gpu %d (%s)", p.GPU, p.BackendDescription())
	}
	return fmt.Sprintf("cpu (%s)", p.BackendDescription())
}

// BackendDescription names the backend and its mode or plugin, e.g. "go
// backend, ops_sequential" or "xla backend, plugin cuda".
func (p Placement) BackendDescription() string {
	name, options, _ := strings.Cut(p.Backend, ":")
	what := name + " backend"
	if name == "xla" {
		plugin, _, _ := strings.Cut(options, ",")
		what += ", plugin " + plugin
	} else if options != "" {
		what += ", " + options
	}
	return what
}

// CheckAccelerator returns an error naming the valid accelerators unless
// accelerator is one of them ("" means AcceleratorAuto).
func CheckAccelerator(accelerator string) error {
	switch accelerator {
	case "", AcceleratorAuto, AcceleratorCPU, AcceleratorGPU:
		return nil
	}
	return fmt.Errorf("unknown %q; valid: %q (default: gpu when found, else cpu), %q, %q",
		accelerator, AcceleratorAuto, AcceleratorCPU, AcceleratorGPU)
}

// Place resolves where the process with local rank localRank runs, from
// the configured accelerator, the configured backend (Config.Backend) and
// the GPUs of this machine's ranks (nil: local rank i uses GPU i):
//
//   - backend set: it is used as is; an explicit accelerator must agree
//     with it ("cpu" with the go backend, "gpu" with xla).
//   - "cpu": $GOMLX_BACKEND when it names the go backend, else
//     DefaultBackend.
//   - "gpu": the XLA backend (a build with -tags xla) with the plugin
//     $GOMLX_BACKEND names, else the first CUDA or ROCm plugin found.
//   - "auto" (or ""): $GOMLX_BACKEND when set, else gpu when this is an
//     XLA build that finds a GPU plugin, else cpu.
//
// On a GPU, the rank's device is chosen with the plugin's
// visible_devices option, so its backend sees that one GPU (as its device
// 0); a configuration that already sets visible_devices is kept.
func Place(accelerator, backend string, gpus []int, localRank int) (Placement, error) {
	if accelerator == "" {
		accelerator = AcceleratorAuto
	}
	if err := CheckAccelerator(accelerator); err != nil {
		return Placement{}, err
	}
	env := os.Getenv(BackendEnvVar)
	config := backend
	switch {
	case backend != "":
		if accelerator != AcceleratorAuto && kindOf(backend) != accelerator {
			return Placement{}, fmt.Errorf("Config.Accelerator %q does not agree with Config.Backend %q (a %s backend); "+
				"leave Accelerator empty to use Backend as it is, or Backend empty to let Accelerator choose", accelerator, backend, kindOf(backend))
		}
	case accelerator == AcceleratorCPU:
		config = DefaultBackend
		if env != "" && kindOf(env) == AcceleratorCPU {
			config = env
		}
	case accelerator == AcceleratorGPU:
		if !XLABuilt {
			return Placement{}, fmt.Errorf("Config.Accelerator %q: this program was built without GoMLX's XLA backend; "+
				"build it with `go build -tags xla` (needs cgo) and install a CUDA PJRT plugin (%s)", accelerator, gpuPluginHint())
		}
		if env != "" && kindOf(env) == AcceleratorGPU {
			config = env
			break
		}
		plugin, err := findGPUPlugin()
		if err != nil {
			return Placement{}, fmt.Errorf("Config.Accelerator %q: %w", accelerator, err)
		}
		config = "xla:" + plugin
	default: // auto
		switch {
		case env != "":
			config = env
		case XLABuilt:
			if plugin, err := findGPUPlugin(); err == nil {
				config = "xla:" + plugin
			} else {
				config = DefaultBackend
			}
		default:
			config = DefaultBackend
		}
	}
	p := Placement{Accelerator: kindOf(config), Backend: config, GPU: -1}
	if p.Accelerator == AcceleratorGPU {
		p.GPU = localRank
		if gpus != nil {
			if localRank >= len(gpus) {
				return Placement{}, fmt.Errorf("Config.DeviceIDs lists %d GPUs (%v) but this process is local rank %d; list one GPU per rank of the machine",
					len(gpus), gpus, localRank)
			}
			p.GPU = gpus[localRank]
		}
		if !strings.Contains(p.Backend, "visible_devices=") {
			p.Backend += ",visible_devices=" + strconv.Itoa(p.GPU)
		}
	}
	return p, nil
}

// kindOf is the accelerator a backend configuration runs on: the go
// backend and XLA's CPU plugin are "cpu", every other XLA plugin "gpu".
func kindOf(config string) string {
	name, options, _ := strings.Cut(config, ":")
	plugin, _, _ := strings.Cut(options, ",")
	if name == "xla" && plugin != "" && !isCPUPlugin(plugin) {
		return AcceleratorGPU
	}
	return AcceleratorCPU
}

// isCPUPlugin reports whether an XLA plugin name or path is XLA's CPU
// plugin ("cpu", "cpu_v0.83.1", …/pjrt_c_api_cpu_plugin.so).
func isCPUPlugin(plugin string) bool {
	base := plugin[strings.LastIndex(plugin, "/")+1:]
	return base == "cpu" || strings.HasPrefix(base, "cpu_v") || strings.Contains(base, "_cpu_") || strings.Contains(base, "-cpu")
}

// gpuPluginHint says what a GPU plugin file is called and where it is
// looked for.
func gpuPluginHint() string {
	return "pjrt_c_api_cuda_plugin.so, looked for in $PJRT_PLUGIN_LIBRARY_PATH, else ~/.local/lib/go-xla, /usr/local/lib/go-xla " +
		"and the system's library directories; or name it with GOMLX_BACKEND=xla:/abs/path/to/plugin.so"
}
