package volt

import (
	"errors"
	"fmt"
	"github.com/voltml/volt/internal/engine"
	"log/slog"
	"os"
	"runtime"
	"sync"

	"github.com/voltml/volt/data"
	"github.com/voltml/volt/dist"
)

// ddpState is the trainer's place in a data-parallel job.
type ddpState struct {
	// group is the job (dist.Single() alone); on is set when it has more
	// than one rank.
	group   dist.Group
	on      bool
	reducer *gradReducer // the gradient all-reduce, when on
	// agreedInterrupt: every rank agreed to stop on a signal or a
	// cancellation, so a run ending with that error does not abort the job.
	agreedInterrupt bool
	// agreedNonFinite: every rank agreed on TerminateOnNaN's error (see
	// agreeNonFinite), so a run ending with it does not abort the job.
	agreedNonFinite bool
	// buffers tracks the module buffers broadcast after each training
	// batch (distributed_buffers.go).
	buffers bufferSync
}

// The process's MPI group: MPI is initialised once per process and cannot
// be restarted after Finalize, so every Trainer of a rank shares it.
var processGroup struct {
	once  sync.Once
	group dist.Group
	err   error
}

// joinProcessGroup returns the process's Group: the MPI job's when an MPI
// launcher started this process (initialising MPI on first use, exporting
// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and NODE_RANK, and
// splitting the cores between the ranks of a machine unless GOMAXPROCS is
// set), else the single-process group.
func joinProcessGroup() (dist.Group, error) {
	if launched, _ := dist.LaunchedByMPI(); !launched {
		return dist.Single(), nil
	}
	processGroup.once.Do(func() {
		g, err := dist.Init()
		if err != nil {
			processGroup.err = err
			return
		}
		if err := dist.ExportEnv(g); err != nil {
			processGroup.err = err
			return
		}
		if _, set := os.LookupEnv("GOMAXPROCS"); !set && g.LocalSize() > 1 {
			// As Lightning sets OMP_NUM_THREADS: the ranks of a machine share
			// its cores instead of each running a thread per core.
			runtime.GOMAXPROCS(max(1, runtime.NumCPU()/g.LocalSize()))
		}
		processGroup.group = g
	})
	return processGroup.group, processGroup.err
}

// FinalizeDistributed ends this process's part of an MPI job (MPI_Finalize)
// once its trainers are done; a program run with Config.Devices > 1, or
// under mpirun, defers it in main:
//
//	defer volt.FinalizeDistributed()
//
// A rank that exits without it makes mpirun report the job as failed. It
// does nothing in a process not started by an MPI launcher, and no trainer
// may run after it.
func FinalizeDistributed() error {
	g := processGroup.group
	if g == nil {
		return nil
	}
	processGroup.group = nil
	processGroup.err = errors.New("volt: FinalizeDistributed was called; MPI cannot be restarted in this process")
	return g.Finalize()
}

// validateDistributed checks Devices and NumNodes.
func (c Config) validateDistributed() []error {
	var errs []error
	if c.Devices < 0 {
		errs = append(errs, fmt.Errorf("Config.Devices: must be >= 0 (0 or 1: one process; N: N ranks per machine), got %d", c.Devices))
	}
	if c.NumNodes < 0 {
		errs = append(errs, fmt.Errorf("Config.NumNodes: must be >= 0 (0 means 1), got %d", c.NumNodes))
	}
	if c.ShardUneven != data.PadRepeat && c.ShardUneven != data.DropTail {
		errs = append(errs, fmt.Errorf("Config.ShardUneven: %s cannot shard a training loader (every rank needs the same number of batches); use data.PadRepeat (default) or data.DropTail", c.ShardUneven))
	}
	return errs
}

// worldSizeWanted is Devices × NumNodes with 0 read as 1.
func (c Config) worldSizeWanted() int { return max(c.Devices, 1) * max(c.NumNodes, 1) }

// setupDistributed joins the process group (see joinProcessGroup). A plain
// process configured for several devices re-executes itself under mpirun
// (relaunch). It checks the job's size against Devices × NumNodes and
// keeps the loggers, warnings and summary on rank 0.
func (t *Trainer) setupDistributed() error {
	cfg := &t.cfg
	if launched, _ := dist.LaunchedByMPI(); !launched && cfg.worldSizeWanted() > 1 {
		if cfg.NumNodes > 1 {
			return fmt.Errorf("Config.NumNodes=%d: a job on several machines is started by the cluster's launcher "+
				"(mpirun -H a:%d,b:%d ./train, or srun --mpi=pmix), not by volt; see the README's distributed section",
				cfg.NumNodes, max(cfg.Devices, 1), max(cfg.Devices, 1))
		}
		return relaunch(cfg.Devices)
	}
	g, err := joinProcessGroup()
	if err != nil {
		return err
	}
	t.ddp.group = g
	if launched, _ := dist.LaunchedByMPI(); launched && cfg.Devices > 0 && g.Size() != cfg.worldSizeWanted() {
		return fmt.Errorf("Config.Devices=%d × NumNodes=%d asks for %d ranks but the MPI job has %d (%s); "+
			"set Devices to the ranks per machine, or 0 to take the launcher's count",
			cfg.Devices, max(cfg.NumNodes, 1), cfg.worldSizeWanted(), g.Size(), g)
	}
	if g.Rank() != 0 {
		cfg.Log = slog.New(slog.DiscardHandler)
		cfg.DisableModelSummary = true
	}
	if err := t.placeRank(g); err != nil {
		return err
	}
	if g.Size() == 1 {
		return nil
	}
	t.ddp.on = true
	t.ddp.reducer = &gradReducer{group: g}
	cfg.reduceGradients = &engine.Reducer{Sum: t.ddp.reducer.sum, Ranks: g.Size()}
	return t.rankZeroLoggers()
}

// GlobalRank returns this process's rank in the data-parallel job (0 in a
// single process), Lightning's trainer.global_rank.
func (t *Trainer) GlobalRank() int { return t.ddp.group.Rank() }

// WorldSize returns the number of ranks in the job (1 in a single process).
func (t *Trainer) WorldSize() int { return t.ddp.group.Size() }

// LocalRank returns this process's rank among the ranks of its machine.
func (t *Trainer) LocalRank() int { return t.ddp.group.LocalRank() }

// NodeRank returns the index of this process's machine.
func (t *Trainer) NodeRank() int { return t.ddp.group.NodeRank() }

// IsGlobalZero reports whether this process is rank 0, the one that logs,
// prints and writes checkpoints.
func (t *Trainer) IsGlobalZero() bool { return t.ddp.group.Rank() == 0 }

// Group returns the data-parallel group the trainer runs in (a
// single-process group when it runs alone), for modules and callbacks that
// need their own collectives. Every rank must call them in the same order.
func (t *Trainer) Group() dist.Group { return t.ddp.group }

// startDistributedFit runs once the training step is compiled and the
// variables initialised: every rank takes rank 0's weights.
func (t *Trainer) startDistributedFit() error {
	if !t.ddp.on {
		return nil
	}
	if _, err := t.broadcastVariables(); err != nil {
		return fmt.Errorf("volt: data-parallel start: %w", err)
	}
	return nil
}
