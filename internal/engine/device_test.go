package engine

import (
	"strings"
	"testing"
)

// TestPlace: how Accelerator, Backend and $GOMLX_BACKEND combine, and the
// GPU a rank gets by its local rank (gpu placements only in XLA builds).
func TestPlace(t *testing.T) {
	cases := []struct {
		name, accelerator, backend, env string
		gpus                            []int
		localRank                       int
		xlaOnly                         bool
		want                            Placement // Backend and Accelerator checked; GPU too on gpu
		wantErr                         string
	}{
		{name: "default is the go backend", want: Placement{AcceleratorCPU, DefaultBackend, -1}},
		{name: "auto takes the environment", accelerator: "auto", env: "go", want: Placement{AcceleratorCPU, "go", -1}},
		{name: "cpu takes a go environment", accelerator: "cpu", env: "go", want: Placement{AcceleratorCPU, "go", -1}},
		{name: "cpu ignores an xla environment", accelerator: "cpu", env: "xla:cuda", want: Placement{AcceleratorCPU, DefaultBackend, -1}},
		{name: "backend wins over the environment", backend: "go", env: "go:ops_sequential", want: Placement{AcceleratorCPU, "go", -1}},
		{name: "cpu agrees with go", accelerator: "cpu", backend: "go", want: Placement{AcceleratorCPU, "go", -1}},
		{name: "cpu agrees with the xla cpu plugin", accelerator: "cpu", backend: "xla:cpu", want: Placement{AcceleratorCPU, "xla:cpu", -1}},
		{name: "gpu disagrees with go", accelerator: "gpu", backend: "go", wantErr: `Config.Accelerator "gpu" does not agree with Config.Backend "go"`},
		{name: "cpu disagrees with cuda", accelerator: "cpu", backend: "xla:cuda", wantErr: `Config.Accelerator "cpu" does not agree with Config.Backend "xla:cuda"`},
		{name: "unknown accelerator", accelerator: "tpu", wantErr: `unknown "tpu"; valid: "auto"`},
		{name: "a gpu backend: local rank picks the gpu", backend: "xla:cuda", localRank: 1,
			want: Placement{AcceleratorGPU, "xla:cuda,visible_devices=1", 1}},
		{name: "a gpu backend: DeviceIDs maps the local rank", backend: "xla:cuda", gpus: []int{3, 5}, localRank: 1,
			want: Placement{AcceleratorGPU, "xla:cuda,visible_devices=5", 5}},
		{name: "visible_devices already set is kept", env: "xla:cuda,visible_devices=2",
			want: Placement{AcceleratorGPU, "xla:cuda,visible_devices=2", 0}},
		{name: "more ranks than DeviceIDs", backend: "xla:cuda", gpus: []int{0}, localRank: 1,
			wantErr: "Config.DeviceIDs lists 1 GPUs ([0]) but this process is local rank 1"},
		{name: "gpu takes an xla environment", accelerator: "gpu", env: "xla:/opt/pjrt_c_api_cuda_plugin.so", xlaOnly: true,
			want: Placement{AcceleratorGPU, "xla:/opt/pjrt_c_api_cuda_plugin.so,visible_devices=0", 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.xlaOnly && !XLABuilt {
				t.Skip("needs a build with -tags xla")
			}
			t.Setenv(BackendEnvVar, tc.env)
			got, err := Place(tc.accelerator, tc.backend, tc.gpus, tc.localRank)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Place: %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Place = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestPlaceGPUWithoutXLA: "gpu" in a build without -tags xla says how to
// build, and "auto" falls back to the Go backend.
func TestPlaceGPUWithoutXLA(t *testing.T) {
	if XLABuilt {
		t.Skip("this test binary links the XLA backend")
	}
	t.Setenv(BackendEnvVar, "")
	_, err := Place("gpu", "", nil, 0)
	if err == nil || !strings.Contains(err.Error(), "go build -tags xla") || !strings.Contains(err.Error(), "pjrt_c_api_cuda_plugin.so") {
		t.Fatalf("Place(gpu): %v; want an error saying to build with -tags xla and naming the plugin", err)
	}
	if p, err := Place("auto", "", nil, 0); err != nil || p.Backend != DefaultBackend {
		t.Fatalf("Place(auto) = %+v, %v; want %s", p, err, DefaultBackend)
	}
}

// TestPlacementString: the start line's words for each kind of placement.
func TestPlacementString(t *testing.T) {
	for _, tc := range []struct {
		p    Placement
		want string
	}{
		{Placement{AcceleratorCPU, "go:ops_sequential", -1}, "cpu (go backend, ops_sequential)"},
		{Placement{AcceleratorCPU, "go", -1}, "cpu (go backend)"},
		{Placement{AcceleratorGPU, "xla:cuda,visible_devices=1", 1}, "gpu 1 (xla backend, plugin cuda)"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// TestPlaceGPUWithoutPlugin: "gpu" in an XLA build on a machine without a
// GPU plugin names what was looked for and where; "auto" takes the CPU.
func TestPlaceGPUWithoutPlugin(t *testing.T) {
	if !XLABuilt {
		t.Skip("needs a build with -tags xla")
	}
	if plugin, err := findGPUPlugin(); err == nil {
		t.Skipf("this machine has the GPU plugin %q", plugin)
	}
	t.Setenv(BackendEnvVar, "")
	_, err := Place("gpu", "", nil, 0)
	if err == nil || !strings.Contains(err.Error(), "no CUDA or ROCm PJRT plugin found") || !strings.Contains(err.Error(), "pjrt_c_api_cuda_plugin.so") {
		t.Fatalf("Place(gpu): %v; want an error naming the plugin looked for", err)
	}
	t.Log(err)
	if p, err := Place("auto", "", nil, 0); err != nil || p.Backend != DefaultBackend {
		t.Fatalf("Place(auto) = %+v, %v; want %s", p, err, DefaultBackend)
	}
}
