package volt_test

import (
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/testutil"
)

func TestDistributedConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  volt.Config
		want string
	}{
		{"negative devices", volt.Config{Devices: -1}, "Config.Devices: must be >= 0"},
		{"negative nodes", volt.Config{NumNodes: -2}, "Config.NumNodes: must be >= 0"},
		{"keep uneven training shards", volt.Config{ShardUneven: data.KeepUneven}, "Config.ShardUneven: KeepUneven cannot shard a training loader"},
		{"unknown uneven", volt.Config{ShardUneven: data.Uneven(9)}, "Config.ShardUneven: Uneven(9)"},
		{"several nodes from a plain process", volt.Config{Devices: 2, NumNodes: 2, DisableLoggers: true}, "started by the cluster's launcher"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := volt.NewTrainer(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewTrainer: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestDevicesWithoutMPIBuild: Devices 2 in a binary built without -tags mpi
// (as this test binary) says how to rebuild instead of training alone.
func TestDevicesWithoutMPIBuild(t *testing.T) {
	if dist.Built {
		t.Skip("this test binary links MPI")
	}
	_, err := volt.NewTrainer(volt.Config{Devices: 2, DisableLoggers: true})
	if err == nil || !strings.Contains(err.Error(), "Config.Devices=2") || !strings.Contains(err.Error(), "go build -tags mpi") {
		t.Fatalf("NewTrainer(Devices: 2): %v; want an error naming Config.Devices and -tags mpi", err)
	}
}

func TestSingleProcessRanks(t *testing.T) {
	for _, devices := range []int{0, 1} {
		tr := testutil.NewTrainer(t, volt.Config{Devices: devices, DisableLoggers: true})
		if tr.GlobalRank() != 0 || tr.WorldSize() != 1 || tr.LocalRank() != 0 || tr.NodeRank() != 0 || !tr.IsGlobalZero() {
			t.Errorf("Devices %d: rank %d of %d, local %d, node %d, zero %v; want rank 0 of 1", devices,
				tr.GlobalRank(), tr.WorldSize(), tr.LocalRank(), tr.NodeRank(), tr.IsGlobalZero())
		}
		if s := tr.DistributedStats(); s != (volt.DistributedStats{}) {
			t.Errorf("Devices %d: DistributedStats %+v before any run", devices, s)
		}
	}
}
