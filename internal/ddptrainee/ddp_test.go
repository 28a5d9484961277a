package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/dist/mpitest"
)

// volt's data-parallel tests build this program with -tags mpi and run it
// under mpirun -np 2 (dist/mpitest: skipped without OpenMPI unless
// VOLT_REQUIRE_TOOLS=1). They compare with Lightning 2.2.5's DDP goldens in
// testdata (copied from the project's shared/golden/lightning/ddp; data.json
// from gen_ddp_data.py) and with one process reading the union of the
// ranks' batches.

// ddpResult mirrors ddptrainee's result line.
type ddpResult struct {
	Rank, World, LocalRank, NodeRank int
	IsGlobalZero                     bool
	Env                              map[string]string
	Batches, ValBatches              map[int][][]int
	ValRuns                          int64
	ValAtSteps                       []int64
	Steps                            [][]float64
	Weights                          []float64
	WeightBits                       []string
	Callback                         map[string]float64
	StepValues                       []map[string]float64
	GlobalStep                       int64
	Epoch                            int
	LastCheckpoint, BestPath, LogDir string
	AllReduces, NonFiniteAgreements  int64
	Predictions                      [][]float64
	MetricValues                     map[string]float64
	ValSamples                       []float64
	Err                              string
}

// lightningRank is the part of a Lightning DDP rank file the tests use.
type lightningRank struct {
	TrainBatches map[int][][]int `json:"train_batches"`
	Steps        []struct {
		W, B []float64
	} `json:"steps"`
	Callback map[string]float64 `json:"callback_metrics_at_end"`
	Trainer  struct {
		GlobalStep   int64 `json:"global_step"`
		CurrentEpoch int   `json:"current_epoch"`
	} `json:"trainer_at_end"`
}

func loadLightningRank(t *testing.T, scenario string, rank int) lightningRank {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("%s.rank%d.json", scenario, rank)))
	if err != nil {
		t.Fatal(err)
	}
	var l lightningRank
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatalf("%s rank %d: %v", scenario, rank, err)
	}
	return l
}

// runRanks runs the trainee on ranks ranks (0: one plain process) and
// returns each rank's result, failing the test when the job fails.
func runRanks(t *testing.T, bin string, ranks int, args ...string) []ddpResult {
	t.Helper()
	dataPath, _ := filepath.Abs(filepath.Join("testdata", "data.json"))
	out := t.TempDir()
	args = append([]string{"-data", dataPath, "-out", out}, args...)
	res := mpitest.Run(t, time.Minute, max(ranks, 1), bin, args...)
	if res.Err != nil {
		t.Fatalf("mpirun -np %d ddptrainee %s: %v\n%s\n%s", ranks, strings.Join(args, " "), res.Err, res.Stdout, res.Stderr)
	}
	return readResults(t, out, max(ranks, 1))
}

// readResults reads the result file of each of ranks ranks from dir.
func readResults(t *testing.T, dir string, ranks int) []ddpResult {
	t.Helper()
	out := make([]ddpResult, ranks)
	for r := range out {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank%d.json", r)))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &out[r]); err != nil {
			t.Fatalf("rank %d's result: %v", r, err)
		}
		if out[r].Rank != r {
			t.Fatalf("rank%d.json holds rank %d's result", r, out[r].Rank)
		}
	}
	return out
}

// maxDiff returns the largest absolute difference of a and b.
func maxDiff(t *testing.T, a, b []float64) float64 {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("lengths %d and %d", len(a), len(b))
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// checkRanksAgree checks that every rank ended with bitwise the same weights.
func checkRanksAgree(t *testing.T, res []ddpResult) {
	t.Helper()
	for _, r := range res[1:] {
		if !slices.Equal(r.WeightBits, res[0].WeightBits) {
			t.Errorf("rank %d's weights %v differ from rank 0's %v", r.Rank, r.WeightBits, res[0].WeightBits)
		}
	}
}

// TestDistributed builds the trainee once and runs every scenario.
func TestDistributed(t *testing.T) {
	bin := mpitest.Build(t, ".")
	t.Run("matches_lightning_ddp", func(t *testing.T) { t.Parallel(); testMatchesLightningDDP(t, bin) })
	t.Run("equals_one_process_over_union", func(t *testing.T) { t.Parallel(); testEqualsUnion(t, bin) })
	t.Run("sync_dist_logging", func(t *testing.T) { t.Parallel(); testSyncDistLogging(t, bin) })
	t.Run("checkpoints_on_rank_zero", func(t *testing.T) { t.Parallel(); testCheckpointsOnRankZero(t, bin) })
	t.Run("stop_agreed", func(t *testing.T) { t.Parallel(); testStopAgreed(t, bin) })
	t.Run("nan_agreed", func(t *testing.T) { t.Parallel(); testNaNAgreed(t, bin) })
	t.Run("predict_gathers", func(t *testing.T) { t.Parallel(); testPredictGathers(t, bin) })
	t.Run("failure_aborts_all", func(t *testing.T) { t.Parallel(); testFailureAbortsAll(t, bin) })
	t.Run("killed_rank_ends_job", func(t *testing.T) { t.Parallel(); testKilledRankEndsJob(t, bin) })
	t.Run("resume_bitwise", func(t *testing.T) { t.Parallel(); testResumeBitwise(t, bin) })
	t.Run("metric_value_reduced", func(t *testing.T) { t.Parallel(); testMetricValueReduced(t, bin) })
	t.Run("devices_relaunches", func(t *testing.T) { t.Parallel(); testDevicesRelaunches(t, bin) })
	t.Run("devices_launcher_forwards_signals", func(t *testing.T) { t.Parallel(); testDevicesLauncherForwardsSignals(t, bin) })
	t.Run("prepare_data_once_per_machine", func(t *testing.T) { t.Parallel(); testPrepareDataOncePerMachine(t, bin) })
	t.Run("profiles_every_rank", func(t *testing.T) { t.Parallel(); testProfilesEveryRank(t, bin) })
	t.Run("time_validation_agreed", func(t *testing.T) { t.Parallel(); testTimeValidationAgreed(t, bin) })
	t.Run("tbptt_nan_agreed_per_split", func(t *testing.T) { t.Parallel(); testTBPTTNaNAgreedPerSplit(t, bin) })
}

// testTimeValidationAgreed: ValCheckInterval Every(d) on 2 ranks whose
// clocks disagree (rank 1 restarts its clock 25 ms after rank 0, every
// training batch takes 10 ms, d = 30 ms, so rank 0's clock says "due" a
// batch or two before rank 1's): both validate after the same batches,
// when the first clock says so.
func testTimeValidationAgreed(t *testing.T, bin string) {
	res := runRanks(t, bin, 2, "-epochs", "6", "-slow", "10ms", "-val-every", "30ms", "-slow-val-rank", "1")
	checkRanksAgree(t, res)
	if res[0].ValRuns < 3 {
		t.Errorf("rank 0 validated %d times in 6 epochs of 10 ms batches with Every(30ms); want 3 or more", res[0].ValRuns)
	}
	for _, r := range res[1:] {
		if r.ValRuns != res[0].ValRuns || !slices.Equal(r.ValAtSteps, res[0].ValAtSteps) {
			t.Errorf("rank %d validated %d times at steps %v, rank 0 %d times at steps %v",
				r.Rank, r.ValRuns, r.ValAtSteps, res[0].ValRuns, res[0].ValAtSteps)
		}
	}
}

// testProfilesEveryRank runs the simple profiler on 2 ranks: each writes
// its own table (rank 0 in the log directory, rank 1 in its rank_1), with
// a gradient all-reduce timed inside every step.
func testProfilesEveryRank(t *testing.T, bin string) {
	root := t.TempDir()
	res := runRanks(t, bin, 2, "-epochs", "2", "-root", root, "-profiler", "simple")
	checkRanksAgree(t, res)
	for r, got := range res {
		path := filepath.Join(got.LogDir, "fit-profile.txt")
		if r > 0 {
			path = filepath.Join(got.LogDir, fmt.Sprintf("rank_%d", r), "fit-profile.txt")
		}
		table, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		for _, action := range []string{"training_step", "gradient_step", "all_reduce", "optimizer_step"} {
			row := fmt.Sprintf("|  %s ", action)
			i := strings.Index(string(table), row)
			if i < 0 {
				t.Errorf("rank %d: no %s row in\n%s", r, action, table)
				continue
			}
			cells := strings.Split(strings.SplitN(string(table[i:]), "\n", 2)[0], "|")
			if calls := strings.TrimSpace(cells[3]); calls != fmt.Sprint(got.GlobalStep) {
				t.Errorf("rank %d: %s ran %s times, want %d (the steps)", r, action, calls, got.GlobalStep)
			}
		}
	}
}

func testMatchesLightningDDP(t *testing.T, bin string) {
	cases := []struct {
		name, scenario string
		args           []string
	}{
		// Lightning's sampler with shuffle and seed 42; rank 1 starts from
		// other weights, which the broadcast replaces.
		{"shuffle_seed42", "ddp_train_shuffle_true_seed42", []string{"-shuffle", "-seed", "42", "-rank-init"}},
		// volt honours Shuffle false: Lightning reads in order only with
		// its own DistributedSampler(shuffle=False).
		{"no_shuffle", "ddp_own_sampler_no_shuffle", []string{"-epochs", "2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runRanks(t, bin, 2, tc.args...)
			checkRanksAgree(t, res)
			for r, got := range res {
				want := loadLightningRank(t, tc.scenario, r)
				wantEnv := map[string]string{"RANK": fmt.Sprint(r), "WORLD_SIZE": "2", "LOCAL_RANK": fmt.Sprint(r), "LOCAL_WORLD_SIZE": "2", "NODE_RANK": "0"}
				if !maps.Equal(got.Env, wantEnv) {
					t.Errorf("rank %d: environment %v, want %v", r, got.Env, wantEnv)
				}
				if got.World != 2 || got.IsGlobalZero != (r == 0) {
					t.Errorf("rank %d: World %d IsGlobalZero %v", r, got.World, got.IsGlobalZero)
				}
				for e, batches := range want.TrainBatches {
					if !slices.EqualFunc(got.Batches[e], batches, slices.Equal) {
						t.Errorf("rank %d epoch %d: batches %v, Lightning %v", r, e, got.Batches[e], batches)
					}
				}
				if len(got.Steps) != len(want.Steps) {
					t.Fatalf("rank %d: %d steps, Lightning %d", r, len(got.Steps), len(want.Steps))
				}
				for i, s := range want.Steps {
					if d := maxDiff(t, got.Steps[i], append(slices.Clone(s.W), s.B...)); d > 1e-6 {
						t.Errorf("rank %d step %d: weights %v differ from Lightning's %v %v by %g", r, i, got.Steps[i], s.W, s.B, d)
					}
				}
				if got.GlobalStep != want.Trainer.GlobalStep {
					t.Errorf("rank %d: GlobalStep %d, Lightning %d", r, got.GlobalStep, want.Trainer.GlobalStep)
				}
				if got.AllReduces != got.GlobalStep {
					t.Errorf("rank %d: %d all-reduces for %d steps", r, got.AllReduces, got.GlobalStep)
				}
			}
		})
	}
}

// testEqualsUnion: 2 ranks × batch 4 train like one process × batch 8 made
// of the ranks' batches (data.ShardUnion), and validate like one process
// over the whole validation set.
func testEqualsUnion(t *testing.T, bin string) {
	for _, tc := range []struct {
		name string
		args []string
		tol  float64
	}{
		{"float32", []string{"-shuffle", "-seed", "7"}, 1e-6},
		{"float64", []string{"-shuffle", "-seed", "7", "-f64"}, 1e-12},
		{"float32_accumulate_2", []string{"-accumulate", "2"}, 1e-6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ranks := runRanks(t, bin, 2, tc.args...)
			one := runRanks(t, bin, 1, append([]string{"-union", "2"}, tc.args...)...)[0]
			checkRanksAgree(t, ranks)
			if d := maxDiff(t, ranks[0].Weights, one.Weights); d > tc.tol {
				t.Errorf("2 ranks end with %v, one process over the union with %v: differ by %g > %g", ranks[0].Weights, one.Weights, d, tc.tol)
			}
			for _, r := range ranks {
				for _, k := range []string{"val_loss_sync", "val_mae"} {
					got, want := r.Callback[k], one.Callback[k]
					if math.Abs(got-want) > tc.tol*max(1, math.Abs(want)) || want == 0 {
						t.Errorf("rank %d: synced %s %v, one process over the whole set %v", r.Rank, k, got, want)
					}
				}
				if r.GlobalStep != one.GlobalStep || r.AllReduces != r.GlobalStep {
					t.Errorf("rank %d: %d steps and %d all-reduces, one process %d steps", r.Rank, r.GlobalStep, r.AllReduces, one.GlobalStep)
				}
			}
		})
	}
}

// testSyncDistLogging compares Lightning's ddp_logging_sync: v =
// (rank+1)·(batch_idx+1) logged with and without SyncDist.
func testSyncDistLogging(t *testing.T, bin string) {
	res := runRanks(t, bin, 2, "-log-sync", "-epochs", "2")
	keys := []string{"r_nosync", "r_nosync_epoch", "r_nosync_step", "r_nosync_sum", "r_nosync_sum_epoch",
		"r_sync_mean", "r_sync_mean_epoch", "r_sync_mean_step", "r_sync_sum", "r_sync_sum_epoch", "r_sync_sum_step",
		"r_sync_max", "r_sync_max_epoch", "r_sync_max_step"}
	for r, got := range res {
		want := loadLightningRank(t, "ddp_logging_sync", r)
		for _, k := range keys {
			if math.Abs(got.Callback[k]-want.Callback[k]) > 1e-6 {
				t.Errorf("rank %d: %s = %v, Lightning %v", r, k, got.Callback[k], want.Callback[k])
			}
		}
		// Validation is not padded (Lightning evaluates index 0 twice): rank
		// 0 reads batches of 4 and 1 samples (v = 1, 2), rank 1 one batch of
		// 4 (v = 2), so the synced mean is (4·1 + 1·2 + 4·2)/9 and the
		// synced sum 1+2+2; unsynced, each rank keeps its own.
		for k, v := range map[string]float64{"val_r_sync_mean": 14.0 / 9, "val_r_sync_sum": 5, "val_r_nosync": []float64{6.0 / 5, 2}[r]} {
			if math.Abs(got.Callback[k]-v) > 1e-9 {
				t.Errorf("rank %d: %s = %v, want %v", r, k, got.Callback[k], v)
			}
		}
	}
}

// testCheckpointsOnRankZero: rank 0 alone writes, into its directory, and
// every rank records rank 0's real paths (Lightning's rank 1 records a best
// path that does not exist).
func testCheckpointsOnRankZero(t *testing.T, bin string) {
	dir := t.TempDir()
	res := runRanks(t, bin, 2, "-ckpt", filepath.Join(dir, "ckpt_rankRANK"), "-epochs", "3")
	if _, err := os.Stat(filepath.Join(dir, "ckpt_rank1")); !os.IsNotExist(err) {
		t.Errorf("rank 1's own directory exists (err %v); only rank 0's should", err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "ckpt_rank0"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || !slices.Contains(names, "last.ckpt") {
		t.Errorf("rank 0's directory holds %v, want the best checkpoint and last.ckpt (as Lightning)", names)
	}
	for _, r := range res {
		if r.BestPath != res[0].BestPath || r.LastCheckpoint != res[0].LastCheckpoint {
			t.Errorf("rank %d: best %q last %q, rank 0: best %q last %q", r.Rank, r.BestPath, r.LastCheckpoint, res[0].BestPath, res[0].LastCheckpoint)
		}
		if _, err := os.Stat(r.BestPath); err != nil {
			t.Errorf("rank %d's best checkpoint: %v", r.Rank, err)
		}
	}
}

// testStopAgreed: a stop requested on one rank stops every rank after the
// same batch (Lightning's other rank fails with "Connection closed by
// peer"), and EarlyStopping on one rank's metric stops both after the same
// epoch (as Lightning).
func testStopAgreed(t *testing.T, bin string) {
	for _, tc := range []struct {
		name      string
		args      []string
		wantStep  int64
		wantEpoch int
	}{
		{"trainer_stop_rank0", []string{"-stop-at", "0:0:0"}, 1, 1},
		{"trainer_stop_rank1", []string{"-stop-at", "1:1:1"}, 5, 2},
		// As Lightning's ddp_early_stopping_rank<k>_says_stop (patience 0
		// there, which volt spells Patience 1): both ranks stop together.
		{"early_stopping_rank1", []string{"-early-stop-rank", "1", "-epochs", "5"}, -1, -1},
		{"early_stopping_rank0", []string{"-early-stop-rank", "0", "-epochs", "5"}, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range runRanks(t, bin, 2, tc.args...) {
				wantStep, wantEpoch := tc.wantStep, tc.wantEpoch
				if wantStep < 0 {
					want := loadLightningRank(t, "ddp_early_stopping_rank"+tc.args[1]+"_says_stop", r.Rank)
					wantStep, wantEpoch = want.Trainer.GlobalStep, want.Trainer.CurrentEpoch
				}
				if r.GlobalStep != wantStep || r.Epoch != wantEpoch {
					t.Errorf("rank %d stopped at step %d, epoch %d; want step %d, epoch %d", r.Rank, r.GlobalStep, r.Epoch, wantStep, wantEpoch)
				}
			}
		})
	}
}

// testNaNAgreed: a NaN in one rank's batch under TerminateOnNaN stops
// every rank after the same batch with the same error, which names that
// rank's loss, instead of aborting the job (the other rank sees only the
// parameters the all-reduced gradients made NaN).
func testNaNAgreed(t *testing.T, bin string) {
	clean := runRanks(t, bin, 2, "-epochs", "1")
	for _, sample := range []int{11, 4} {
		t.Run(fmt.Sprint("sample_", sample), func(t *testing.T) {
			wantRank, wantBatch := -1, -1
			for _, r := range clean {
				for i, b := range r.Batches[0] {
					if slices.Contains(b, sample) {
						wantRank, wantBatch = r.Rank, i
					}
				}
			}
			if wantRank < 0 {
				t.Fatalf("no rank reads sample %d in a clean run: %v %v", sample, clean[0].Batches, clean[1].Batches)
			}
			dir := t.TempDir()
			res := mpitest.Run(t, time.Minute, 2, bin, "-data", filepath.Join("testdata", "data.json"), "-epochs", "1",
				"-nan-sample", fmt.Sprint(sample), "-out", dir)
			if res.Err == nil || res.TimedOut {
				t.Fatalf("job err %v, timed out %v; want each rank to fail with TerminateOnNaN's error\n%s%s", res.Err, res.TimedOut, res.Stdout, res.Stderr)
			}
			if strings.Contains(res.Stdout+res.Stderr, "aborting all ranks") {
				t.Errorf("the job was aborted instead of stopped:\n%s%s", res.Stdout, res.Stderr)
			}
			got := readResults(t, dir, 2)
			want := fmt.Sprintf("volt: TerminateOnNaN: the loss is NaN at epoch 0, batch %d (global step %d) on rank %d of 2", wantBatch, wantBatch, wantRank)
			for _, r := range got {
				if r.Err != want {
					t.Errorf("rank %d: error %q, want %q", r.Rank, r.Err, want)
				}
				if len(r.Batches[0]) != wantBatch || r.GlobalStep != int64(wantBatch) {
					t.Errorf("rank %d: %d batches ended, global step %d; want both %d", r.Rank, len(r.Batches[0]), r.GlobalStep, wantBatch)
				}
			}
		})
	}
}

// testPredictGathers: 2 ranks each predict their shard of the 21 samples
// (11 and 10: no padding), and every rank returns what one process
// returns: the same predictions in the same batches.
func testPredictGathers(t *testing.T, bin string) {
	for _, batch := range []string{"4", "3"} {
		t.Run("batch_"+batch, func(t *testing.T) {
			ranks := runRanks(t, bin, 2, "-predict", "-batch", batch)
			one := runRanks(t, bin, 1, "-predict", "-batch", batch)[0]
			if len(one.Predictions) == 0 {
				t.Fatal("one process predicted nothing")
			}
			for _, r := range ranks {
				if len(r.Predictions) != len(one.Predictions) {
					t.Fatalf("rank %d: %d batches of predictions, one process %d", r.Rank, len(r.Predictions), len(one.Predictions))
				}
				for i := range one.Predictions {
					if d := maxDiff(t, r.Predictions[i], one.Predictions[i]); d > 1e-6 {
						t.Errorf("rank %d batch %d: %v, one process %v", r.Rank, i, r.Predictions[i], one.Predictions[i])
					}
				}
			}
		})
	}
}

// testFailureAbortsAll: an error or a panic on rank 1 ends both ranks at
// once, naming rank 1 (Lightning's other rank exits ~2.4 s later).
func testFailureAbortsAll(t *testing.T, bin string) {
	for _, tc := range []struct{ flag, want string }{
		{"-fail-at", "planned failure on rank 1 at epoch 0 batch 1"},
		{"-panic-at", "planned panic on rank 1 at epoch 0 batch 1"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			res := mpitest.Run(t, time.Minute, 2, bin, "-data", filepath.Join("testdata", "data.json"), tc.flag, "1:0:1", "-slow", "20ms")
			if res.Err == nil || res.TimedOut {
				t.Fatalf("job err %v, timed out %v; want a failure\n%s%s", res.Err, res.TimedOut, res.Stdout, res.Stderr)
			}
			out := res.Stdout + res.Stderr
			if !strings.Contains(out, "rank 1 of 2 failed") || !strings.Contains(out, tc.want) {
				t.Errorf("output does not name rank 1 and %q:\n%s", tc.want, out)
			}
			if strings.Contains(res.Stdout, "RESULT") {
				t.Errorf("a rank finished training despite rank 1's failure:\n%s", res.Stdout)
			}
		})
	}
}

// testKilledRankEndsJob: SIGKILL on rank 1 ends every rank within 10 s.
func testKilledRankEndsJob(t *testing.T, bin string) {
	pidLine := regexp.MustCompile(`^PID rank=1 pid=(\d+)$`)
	var killed time.Time
	res := mpitest.RunWatching(t, time.Minute, 2, bin,
		[]string{"-data", filepath.Join("testdata", "data.json"), "-epochs", "100000", "-slow", "5ms"},
		func(line string) {
			m := pidLine.FindStringSubmatch(line)
			if m == nil {
				return
			}
			pid, _ := strconv.Atoi(m[1])
			time.Sleep(300 * time.Millisecond) // inside training
			killed = time.Now()
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Errorf("kill %d: %v", pid, err)
			}
		})
	if killed.IsZero() {
		t.Fatalf("rank 1 never printed its pid:\n%s%s", res.Stdout, res.Stderr)
	}
	if res.Err == nil || res.TimedOut {
		t.Fatalf("job err %v, timed out %v; want a failure", res.Err, res.TimedOut)
	}
	if took := time.Since(killed); took > 10*time.Second {
		t.Errorf("the job took %v to end after rank 1 was killed", took)
	}
	if out := res.Stdout + res.Stderr; !strings.Contains(out, "rank 1") {
		t.Errorf("output does not name rank 1:\n%s", out)
	}
}

// testResumeBitwise: SIGTERM on one rank mid-epoch stops both ranks after
// the same batch with one resumable checkpoint (rank 0 writes it, with
// every rank's metric accumulators); resumed on 2 ranks, the run ends
// bitwise equal to the uninterrupted one, reading the rest of each rank's
// shard, and with 2 epochs (the interrupted epoch is the last) each rank's
// epoch values equal the uninterrupted run's.
func testResumeBitwise(t *testing.T, bin string) {
	for _, epochs := range []string{"3", "2"} {
		t.Run("epochs_"+epochs, func(t *testing.T) {
			args := []string{"-shuffle", "-seed", "42", "-epochs", epochs}
			whole := runRanks(t, bin, 2, args...)
			dir := t.TempDir()
			first := runRanks(t, bin, 2, append(args, "-ckpt", dir, "-signal-at", "1:1:0")...)
			for _, r := range first {
				if r.GlobalStep != 4 || !strings.Contains(r.Err, "interrupted by terminated") {
					t.Fatalf("rank %d: the signalled run stopped at step %d with %q; want step 4, interrupted", r.Rank, r.GlobalStep, r.Err)
				}
			}
			rest := runRanks(t, bin, 2, append(args, "-resume", filepath.Join(dir, "interrupted.ckpt"))...)
			checkRanksAgree(t, rest)
			for r := range rest {
				if !slices.Equal(rest[r].WeightBits, whole[r].WeightBits) {
					t.Errorf("rank %d: resumed run ends with %v, uninterrupted with %v", r, rest[r].WeightBits, whole[r].WeightBits)
				}
				if got, want := rest[r].Batches[1], whole[r].Batches[1][1:]; !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("rank %d: resumed epoch 1 read %v, uninterrupted read %v after its first batch", r, got, want)
				}
				got, want := rest[r].Callback["train_loss_epoch"], whole[r].Callback["train_loss_epoch"]
				if math.Abs(got-want) > 1e-7*math.Abs(want) || want == 0 {
					t.Errorf("rank %d: resumed train_loss_epoch %v, uninterrupted %v", r, got, want)
				}
			}
			if whole[0].Callback["train_loss_epoch"] == whole[1].Callback["train_loss_epoch"] {
				t.Errorf("both ranks' train_loss_epoch are %v: the test cannot tell whose accumulators resumed", whole[0].Callback["train_loss_epoch"])
			}
		})
	}
}

// testDevicesRelaunches: Config.Devices=2 in a plain process runs the
// program again under mpirun as 2 ranks.
func testDevicesRelaunches(t *testing.T, bin string) {
	dir := t.TempDir()
	cmd := exec.Command(bin, "-data", filepath.Join("testdata", "data.json"), "-devices", "2", "-epochs", "1", "-out", dir)
	cmd.Env = append(os.Environ(), dist.LaunchEnv()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	res := readResults(t, dir, 2)
	checkRanksAgree(t, res)
	for _, r := range res {
		if r.World != 2 {
			t.Errorf("rank %d: world size %d, want 2", r.Rank, r.World)
		}
	}
}

// PrepareData runs on the first rank of the machine only, and no rank's
// Setup starts before it has finished (Lightning's prepare_data_per_node).
func testPrepareDataOncePerMachine(t *testing.T, bin string) {
	dir := t.TempDir()
	for _, r := range runRanks(t, bin, 2, "-prepare-dir", dir, "-epochs", "1") {
		if r.Err != "" {
			t.Errorf("rank %d: %s", r.Rank, r.Err)
		}
	}
	prepared, err := filepath.Glob(filepath.Join(dir, "prepared.*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(prepared) != 1 || filepath.Base(prepared[0]) != "prepared.0" {
		t.Errorf("PrepareData ran on %v, want rank 0 only", prepared)
	}
}
