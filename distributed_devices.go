package volt

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/engine"
)

// placeDevices checks Accelerator and DeviceIDs, reads Devices 0 as
// len(DeviceIDs), and places this process as local rank 0, so that a bad
// combination fails in NewTrainer before any rank starts;
// setupDistributed places each rank again by its real local rank.
func (r *resolved) placeDevices() error {
	var errs []error
	if err := engine.CheckAccelerator(r.Accelerator); err != nil {
		errs = append(errs, fmt.Errorf("Config.Accelerator: %w", err))
	}
	seen := map[int]bool{}
	for i, id := range r.DeviceIDs {
		switch {
		case id < 0:
			errs = append(errs, fmt.Errorf("Config.DeviceIDs[%d]: a GPU index must be >= 0, got %d", i, id))
		case seen[id]:
			errs = append(errs, fmt.Errorf("Config.DeviceIDs[%d]: GPU %d is listed twice; each rank of a machine needs its own GPU", i, id))
		}
		seen[id] = true
	}
	if n := len(r.DeviceIDs); n > 0 {
		switch {
		case r.Accelerator == engine.AcceleratorCPU:
			errs = append(errs, fmt.Errorf("Config.DeviceIDs lists GPUs %v but Config.Accelerator is %q; use \"gpu\" or \"auto\", or leave DeviceIDs nil", r.DeviceIDs, r.Accelerator))
		case r.Devices == 0:
			r.Devices = n
		case r.Devices != n:
			errs = append(errs, fmt.Errorf("Config.DeviceIDs lists %d GPUs %v but Config.Devices is %d; list one GPU per rank of a machine (or leave Devices 0)", n, r.DeviceIDs, r.Devices))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	p, err := engine.Place(r.Accelerator, r.Backend, r.DeviceIDs, 0)
	if err != nil {
		return err
	}
	if p.Accelerator != engine.AcceleratorGPU && len(r.DeviceIDs) > 0 {
		return fmt.Errorf("Config.DeviceIDs lists GPUs %v but this process runs on the CPU (%s); "+
			"set Accelerator \"gpu\" in a build with -tags xla and a GPU plugin, or leave DeviceIDs nil", r.DeviceIDs, p)
	}
	r.placement, r.backend = p, p.Backend
	return nil
}

// placeRank places this rank on its device by its local rank in g (a GPU
// rank gets DeviceIDs[local rank], or GPU local rank) and says on rank 0,
// in one line, what runs where: under data-parallel training or on a GPU
// (a single process on the CPU, the usual case, says nothing).
func (t *Trainer) placeRank(g dist.Group) error {
	cfg := &t.cfg
	p, err := engine.Place(cfg.Accelerator, cfg.Backend, cfg.DeviceIDs, g.LocalRank())
	if err != nil {
		return err
	}
	cfg.placement, cfg.backend = p, p.Backend
	if g.Rank() == 0 && (g.Size() > 1 || p.Accelerator == engine.AcceleratorGPU) {
		cfg.Log.Info(startLine(g, p, cfg.DeviceIDs, runtime.GOMAXPROCS(0)))
	}
	return nil
}

// startLine is the line that says what runs where, e.g. "volt: 2 ranks on
// 1 machine, cpu (go backend, ops_by_graph), GOMAXPROCS 1 per rank; MPI
// (…)" or "volt: 1 process, cpu (go backend, ops_by_graph), GOMAXPROCS 16".
func startLine(g dist.Group, p engine.Placement, gpus []int, procs int) string {
	where := p.String()
	if p.Accelerator == engine.AcceleratorGPU && g.Size() > 1 {
		mapping := "local rank i on GPU i"
		if gpus != nil {
			mapping = fmt.Sprintf("local rank i on GPU DeviceIDs[i] of %v", gpus)
		}
		where = fmt.Sprintf("gpu (%s), %s", p.BackendDescription(), mapping)
	}
	if g.Size() == 1 {
		return fmt.Sprintf("volt: 1 process, %s, GOMAXPROCS %d", where, procs)
	}
	machines := "1 machine"
	if g.NumNodes() > 1 {
		machines = fmt.Sprintf("%d machines", g.NumNodes())
	}
	return fmt.Sprintf("volt: %d ranks on %s, %s, GOMAXPROCS %d per rank; %s", g.Size(), machines, where, procs, g)
}
