package volt

import (
	"testing"

	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/engine"
)

// TestStartLine: the words of the line that says what runs where.
func TestStartLine(t *testing.T) {
	cpu := engine.Placement{Accelerator: engine.AcceleratorCPU, Backend: engine.DefaultBackend, GPU: -1}
	gpu := engine.Placement{Accelerator: engine.AcceleratorGPU, Backend: "xla:cuda,visible_devices=0", GPU: 0}
	for _, tc := range []struct {
		name  string
		group dist.Group
		p     engine.Placement
		gpus  []int
		procs int
		want  string
	}{
		{"one process on a gpu", dist.Single(), gpu, nil, 16, "volt: 1 process, gpu 0 (xla backend, plugin cuda), GOMAXPROCS 16"},
		{"2 ranks on the cpu", twinGroup{dist.Single()}, cpu, nil, 1,
			"volt: 2 ranks on 1 machine, cpu (go backend, ops_by_graph), GOMAXPROCS 1 per rank; single process (no MPI): rank 0 of 1"},
		{"2 ranks on gpus", twinGroup{dist.Single()}, gpu, nil, 8,
			"volt: 2 ranks on 1 machine, gpu (xla backend, plugin cuda), local rank i on GPU i, GOMAXPROCS 8 per rank; single process (no MPI): rank 0 of 1"},
		{"2 ranks on listed gpus", twinGroup{dist.Single()}, gpu, []int{2, 3}, 8,
			"volt: 2 ranks on 1 machine, gpu (xla backend, plugin cuda), local rank i on GPU DeviceIDs[i] of [2 3], GOMAXPROCS 8 per rank; single process (no MPI): rank 0 of 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := startLine(tc.group, tc.p, tc.gpus, tc.procs); got != tc.want {
				t.Errorf("startLine:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
