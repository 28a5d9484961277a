package resumeprop

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// Scenario is one generated configuration and the interruptions of its
// interrupted run. It is plain data (JSON) so that a child process or an
// MPI job can run it.
type Scenario struct {
	Seed  uint64 `json:"seed"`
	Ranks int    `json:"ranks"` // 1, or 2 under mpirun
	Plan  int    `json:"plan"`  // the crash plan's number
	Group string `json:"group"` // the test's name for the set of cases it belongs to

	Epochs     int  `json:"epochs"`
	Examples   int  `json:"examples"` // training examples (per rank: the loader shards them)
	BatchSize  int  `json:"batch_size"`
	Shuffle    bool `json:"shuffle"`
	Accumulate int  `json:"accumulate"`

	Clip    string  `json:"clip"` // "", "norm" or "value"
	ClipVal float64 `json:"clip_val,omitempty"`

	Optimizer string `json:"optimizer"` // "adam" or "sgd-momentum"
	// Scheduler is "", "step" (StepLR) or "plateau" (ReduceLROnPlateau).
	Scheduler     string `json:"scheduler"`
	SchedInterval string `json:"sched_interval,omitempty"` // "step" or "epoch"
	SchedFreq     int    `json:"sched_freq,omitempty"`
	StepSize      int    `json:"step_size,omitempty"`
	PlateauOn     string `json:"plateau_on,omitempty"` // the monitored metric
	Patience      int    `json:"patience,omitempty"`

	Averaging string `json:"averaging"` // "", "ema" or "swa"

	TrainMetric bool `json:"train_metric"` // LogMetric(train_mae) in the training step

	// StepCkpt is ModelCheckpoint's EveryNTrainSteps (0: none).
	StepCkpt int `json:"step_ckpt"`
	// EpochCkpt adds an epoch-cadence ModelCheckpoint monitoring val_loss
	// (top 2, last).
	EpochCkpt bool `json:"epoch_ckpt"`

	ValInterval    string  `json:"val_interval"` // "", "half" (Fraction 0.5) or "batches:N"
	CheckValEveryN int     `json:"check_val_every_n"`
	LogEveryNSteps int     `json:"log_every_n_steps"`
	CSVFlushEvery  int     `json:"csv_flush_every"`
	TBFlushEvery   int     `json:"tb_flush_every"`
	ValExamples    int     `json:"val_examples"`
	NumSanitySteps int     `json:"num_sanity_steps"`
	Crashes        []Crash `json:"crashes"`
}

// Crash is one interruption of the interrupted run.
type Crash struct {
	// Kind is "error" (a callback returns an error), "panic" (a callback
	// panics) or "sigkill" (the process is killed with SIGKILL from
	// outside).
	Kind string `json:"kind"`
	// Hook is where an error or panic happens: one of Hooks. A SIGKILL
	// comes after the training batch end that reports AtBatch.
	Hook string `json:"hook"`
	// AtBatch: the crash happens at the first call of Hook (outside the
	// sanity check) after this many training batches of the run were
	// processed.
	AtBatch int64 `json:"at_batch"`
	// Rank is the rank that fails (2 ranks).
	Rank int `json:"rank"`
	// First puts the crashing callback before ModelCheckpoint's, so that
	// it fails before a save due in the same hook.
	First bool `json:"first"`
	// DelayMicros delays a SIGKILL after the announcement, in microseconds.
	DelayMicros int `json:"delay_us,omitempty"`
}

// Hooks are the hooks a Crash can fail in.
var Hooks = []string{"train_batch_start", "train_batch_end", "validation_batch_end", "validation_end", "train_epoch_end", "train_epoch_start"}

// String is the scenario as one line of JSON.
func (s Scenario) String() string {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%#v", s)
	}
	return string(b)
}

// BatchesPerEpoch is the number of training batches of an epoch on each
// rank.
func (s Scenario) BatchesPerEpoch() int {
	n := s.Examples / max(s.Ranks, 1)
	return (n + s.BatchSize - 1) / s.BatchSize
}

// TotalBatches is the number of training batches of the whole run.
func (s Scenario) TotalBatches() int64 { return int64(s.BatchesPerEpoch() * s.Epochs) }

// Generate returns the scenario of seed on ranks ranks, with crash plan
// number plan: crashes of the given kinds ("error", "panic", "sigkill";
// one is drawn per crash). The configuration depends on seed and ranks
// only, so that the plans of one seed share an uninterrupted run.
func Generate(seed uint64, ranks, plan int, kinds []string) Scenario {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	s := Scenario{
		Seed: seed, Ranks: ranks,
		Epochs:     2 + r.IntN(2),
		BatchSize:  4,
		Shuffle:    r.IntN(3) > 0,
		Accumulate: 1 + r.IntN(3),
		Optimizer:  pick("adam", "sgd-momentum"),
		Clip:       pick("", "norm", "value"),
		Scheduler:  pick("", "step", "plateau"),
		Averaging:  pick("", "", "ema", "swa"),

		TrainMetric:    r.IntN(2) == 0,
		LogEveryNSteps: 1 + r.IntN(3),
		CSVFlushEvery:  []int{1, 3, 0}[r.IntN(3)],
		TBFlushEvery:   []int{1, 4, 0}[r.IntN(3)],
		ValExamples:    8 * ranks,
		NumSanitySteps: r.IntN(2),
		CheckValEveryN: 1,
	}
	s.Examples = ranks * (24 + 2*r.IntN(5)) // 6–8 batches a rank, the last one partial sometimes
	switch s.Clip {
	case "norm":
		s.ClipVal = []float64{0.05, 0.5}[r.IntN(2)]
	case "value":
		s.ClipVal = []float64{0.01, 0.1}[r.IntN(2)]
	}
	switch s.Scheduler {
	case "step":
		s.SchedInterval = pick("step", "epoch")
		s.SchedFreq = 1 + r.IntN(2)
		s.StepSize = 1 + r.IntN(3)
	case "plateau":
		s.SchedInterval = "epoch"
		s.PlateauOn = pick("val_loss", "train_loss_epoch")
		s.Patience = r.IntN(2)
	}
	switch r.IntN(4) {
	case 0:
		s.ValInterval = "half"
	case 1:
		s.ValInterval = fmt.Sprintf("batches:%d", 2+r.IntN(3))
	}
	if s.ValInterval == "" && s.PlateauOn != "val_loss" && r.IntN(4) == 0 {
		s.CheckValEveryN, s.Epochs = 2, 3
	}
	switch r.IntN(5) {
	case 0: // the default checkpoint only
	case 1:
		s.EpochCkpt = true
	case 2:
		s.StepCkpt = 1 + r.IntN(3)
		s.EpochCkpt = true
	default:
		s.StepCkpt = 1 + r.IntN(3)
	}
	s.Plan = plan
	s.Crashes = genCrashes(rand.New(rand.NewPCG(seed, uint64(plan))), s, kinds)
	return s
}

// genCrashes draws one crash, or two in a row (the second after the
// resumed run passed the first), each after the first checkpoint of the
// run so that "last" exists.
func genCrashes(r *rand.Rand, s Scenario, kinds []string) []Crash {
	n := 1
	if r.IntN(4) == 0 {
		n = 2
	}
	first := s.firstCheckpointBatch()
	total := s.TotalBatches()
	var out []Crash
	lo := first + 1 // after the hooks of the first save
	for i := 0; i < n && lo < total; i++ {
		c := Crash{Kind: kinds[r.IntN(len(kinds))], Rank: r.IntN(s.Ranks), First: r.IntN(2) == 0}
		c.AtBatch = lo + r.Int64N(total-lo)
		if c.Kind == "sigkill" {
			c.Hook = "train_batch_end"
			c.DelayMicros = r.IntN(3000)
		} else {
			c.Hook = Hooks[r.IntN(len(Hooks))]
		}
		out = append(out, c)
		lo = c.AtBatch + 1
	}
	return out
}

// firstCheckpointBatch is the number of training batches after which the
// run has saved its first checkpoint (a bound: the crash comes later).
func (s Scenario) firstCheckpointBatch() int64 {
	per := int64(s.BatchesPerEpoch())
	if s.StepCkpt > 0 {
		// Optimizer steps: windows of Accumulate batches, the epoch's last
		// window possibly shorter.
		windows := (per + int64(s.Accumulate) - 1) / int64(s.Accumulate)
		if int64(s.StepCkpt) <= windows {
			return min(int64(s.StepCkpt*s.Accumulate), per)
		}
	}
	return per * int64(s.CheckValEveryN)
}
