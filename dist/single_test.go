package dist_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/voltml/volt/dist"
)

// TestInitWithoutLauncherIsSingle checks that a process not started by an
// MPI launcher gets the one-process group, whatever the build.
func TestInitWithoutLauncherIsSingle(t *testing.T) {
	for _, name := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"} {
		t.Setenv(name, "")
		unsetEnv(t, name)
	}
	g, err := dist.Init()
	if err != nil {
		t.Fatal(err)
	}
	if g.Rank() != 0 || g.Size() != 1 || g.LocalRank() != 0 || g.LocalSize() != 1 || g.NodeRank() != 0 || g.NumNodes() != 1 {
		t.Errorf("Init() = %s, want rank 0 of 1 on node 0 of 1", g)
	}
}

// TestNotBuiltErrors checks the errors a build without -tags mpi gives
// where MPI is needed.
func TestNotBuiltErrors(t *testing.T) {
	if dist.Built {
		t.Skip("this test binary links MPI")
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	_, err := dist.Init()
	if !errors.Is(err, dist.ErrNotBuilt) || !strings.Contains(err.Error(), "OMPI_COMM_WORLD_SIZE=2") ||
		!strings.Contains(err.Error(), "built without -tags mpi") {
		t.Errorf("Init under mpirun in a build without MPI: err = %v, want ErrNotBuilt naming OMPI_COMM_WORLD_SIZE=2", err)
	}
	if _, err := dist.RelaunchCommand(context.Background(), 2); !errors.Is(err, dist.ErrNotBuilt) {
		t.Errorf("RelaunchCommand: err = %v, want ErrNotBuilt", err)
	}
}

// TestSingleCollectives checks that the one-process group leaves buffers
// as they are, gathers copies, validates its arguments and refuses use
// after Finalize.
func TestSingleCollectives(t *testing.T) {
	g := dist.Single()
	f32 := []float32{1, -2}
	f64 := []float64{3}
	i64 := []int64{4, 5}
	b := []byte("xy")
	steps := []struct {
		name    string
		run     func() error
		wantErr string
	}{
		{"AllReduceFloat32", func() error { return g.AllReduceFloat32(f32, dist.Sum) }, ""},
		{"AllReduceFloat64", func() error { return g.AllReduceFloat64(f64, dist.Max) }, ""},
		{"AllReduceInt64", func() error { return g.AllReduceInt64(i64, dist.Min) }, ""},
		{"bad op", func() error { return g.AllReduceFloat32(f32, dist.Op(7)) }, "reduction 7 is not one of"},
		{"Broadcast", func() error { return g.Broadcast(b, 0) }, ""},
		{"Broadcast bad root", func() error { return g.Broadcast(b, 1) }, "root 1 is not a rank in [0, 1)"},
		{"Barrier", g.Barrier, ""},
		{"AnyTrue", func() error {
			for _, flag := range []bool{false, true} {
				got, err := dist.AnyTrue(g, flag)
				if err != nil || got != flag {
					return errors.New("AnyTrue changed the flag")
				}
			}
			return nil
		}, ""},
		{"BroadcastBytes", func() error {
			got, err := dist.BroadcastBytes(g, []byte("path"), 0)
			if err != nil || string(got) != "path" {
				return errors.New("BroadcastBytes changed the data")
			}
			return err
		}, ""},
		{"AllGatherInt64", func() error {
			got, err := g.AllGatherInt64(i64)
			if err == nil && (len(got) != 2 || got[0] != 4 || &got[0] == &i64[0]) {
				return errors.New("AllGatherInt64 did not return a copy of the values")
			}
			return err
		}, ""},
		{"Finalize", g.Finalize, ""},
		{"Barrier after Finalize", g.Barrier, "Barrier called after Finalize"},
	}
	for _, s := range steps {
		err := s.run()
		switch {
		case s.wantErr == "" && err != nil:
			t.Errorf("%s: %v", s.name, err)
		case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
			t.Errorf("%s: err = %v, want one containing %q", s.name, err, s.wantErr)
		}
	}
	if f32[0] != 1 || f32[1] != -2 || f64[0] != 3 || i64[0] != 4 || string(b) != "xy" {
		t.Errorf("one-process collectives changed their buffers: %v %v %v %q", f32, f64, i64, b)
	}
}

// TestMPIRunCommand checks the launch command and its environment.
func TestMPIRunCommand(t *testing.T) {
	if _, err := dist.MPIRunCommand(context.Background(), 0, "prog"); err == nil || !strings.Contains(err.Error(), "ranks must be >= 1") {
		t.Errorf("ranks 0: err = %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := dist.MPIRunCommand(context.Background(), 2, "prog"); err == nil || !strings.Contains(err.Error(), "mpirun is not in PATH") {
		t.Errorf("no mpirun: err = %v", err)
	}
	env := strings.Join(dist.LaunchEnv(), " ")
	if !strings.Contains(env, "OMPI_MCA_rmaps_base_oversubscribe=1") {
		t.Errorf("LaunchEnv() = %s, want oversubscription allowed", env)
	}
}
