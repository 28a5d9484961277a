package dist_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
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

// ranks is the number of MPI ranks the tests launch.
const ranks = 2

// report mirrors the probe's -mode collectives output (see
// internal/mpiprobe/collectives.go for the inputs of each field).
type report struct {
	Rank, Size, LocalRank, LocalSize, NodeRank, NumNodes int
	Describe                                             string
	SumF32                                               []float32
	LargeSamples                                         map[int]float32
	LargeSum                                             float64
	MaxF64                                               []float64
	MinI64                                               []int64
	GatherI64                                            []int64
	GatherF64                                            []float64
	Bcast0, BcastLast                                    string
	AnyRank1, AnyNone                                    bool
	Env                                                  map[string]string
}

// TestMPI builds the probe with -tags mpi and runs each scenario under
// mpirun -np 2.
func TestMPI(t *testing.T) {
	bin := mpitest.Build(t, "./internal/mpiprobe")
	t.Run("collectives", func(t *testing.T) {
		t.Parallel()
		res := mpitest.Run(t, time.Minute, ranks, bin, "-mode", "collectives")
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s%s", res.Err, res.Stdout, res.Stderr)
		}
		reports := parseReports(t, res.Stdout)
		for r, rep := range reports {
			checkReport(t, r, rep)
		}
	})
	t.Run("stop_on_one_rank_stops_all", func(t *testing.T) {
		t.Parallel()
		res := mpitest.Run(t, time.Minute, ranks, bin, "-mode", "stop")
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s%s", res.Err, res.Stdout, res.Stderr)
		}
		for r := range ranks {
			if want := fmt.Sprintf("STOP rank=%d step=3", r); !strings.Contains(res.Stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, res.Stdout)
			}
		}
	})
	failures := []struct {
		mode string
		want []string // in stdout+stderr
	}{
		{"abort", []string{"rank 1 of 2 failed, aborting all ranks: boom on purpose"}},
		{"panic", []string{"rank 1 of 2 failed, aborting all ranks: panic: boom on purpose", "main.fail"}},
		{"exit", []string{"Exit code:    3"}},
	}
	for _, tc := range failures {
		t.Run("failure_"+tc.mode, func(t *testing.T) {
			t.Parallel()
			res := mpitest.Run(t, time.Minute, ranks, bin, "-mode", tc.mode)
			checkFailed(t, res)
			out := res.Stdout + res.Stderr
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "barrier returned") {
				t.Errorf("rank 0 left its barrier although rank 1 failed:\n%s", out)
			}
		})
	}
	t.Run("failure_sigkill", func(t *testing.T) {
		t.Parallel()
		res := runAndKillRank1(t, bin)
		checkFailed(t, res)
	})
}

// checkFailed checks that a job with a failing rank exited non-zero, on its
// own, within 30 s (about 3 s on an idle machine; the bound catches a hang).
func checkFailed(t *testing.T, res mpitest.Result) {
	t.Helper()
	if res.TimedOut {
		t.Fatalf("the job hung until the test's timeout (%s)\n%s%s", res.Elapsed, res.Stdout, res.Stderr)
	}
	if res.Err == nil {
		t.Errorf("mpirun exited 0 although rank 1 failed\n%s%s", res.Stdout, res.Stderr)
	}
	if res.Elapsed > 30*time.Second { // a hang, not a slow machine: ~3 s here when idle
		t.Errorf("the job took %s to end after a failure, want < 30 s", res.Elapsed)
	}
	t.Logf("job ended %s after launch", res.Elapsed.Round(time.Millisecond))
}

// runAndKillRank1 runs -mode loop and sends SIGKILL to rank 1 once both
// ranks have printed their pids.
func runAndKillRank1(t *testing.T, bin string) mpitest.Result {
	t.Helper()
	pidLine := regexp.MustCompile(`PID rank=1 pid=(\d+)`)
	return mpitest.RunWatching(t, time.Minute, ranks, bin, []string{"-mode", "loop"}, func(line string) {
		if m := pidLine.FindStringSubmatch(line); m != nil {
			pid, _ := strconv.Atoi(m[1])
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Errorf("kill rank 1 (pid %d): %v", pid, err)
			}
		}
	})
}

// parseReports decodes the REPORT lines, indexed by rank.
func parseReports(t *testing.T, stdout string) []report {
	t.Helper()
	reports := make([]report, ranks)
	seen := 0
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "REPORT ")
		if !ok {
			continue
		}
		var rep report
		if err := json.Unmarshal([]byte(line), &rep); err != nil {
			t.Fatalf("bad report %q: %v", line, err)
		}
		if rep.Rank < 0 || rep.Rank >= ranks {
			t.Fatalf("report from rank %d of a %d-rank job", rep.Rank, ranks)
		}
		reports[rep.Rank] = rep
		seen++
	}
	if seen != ranks {
		t.Fatalf("got %d reports, want %d:\n%s", seen, ranks, stdout)
	}
	return reports
}

// checkReport compares rank r's report with the reductions of the inputs
// that collectives.go documents, computed here over ranks 0..ranks-1.
func checkReport(t *testing.T, r int, rep report) {
	t.Helper()
	const largeLen = 4<<20 + 3
	var sumF32 [3]float32
	maxF64 := []float64{-1e300, -1e300}
	minI64 := []int64{1 << 62, 1 << 62}
	var gatherI64 []int64
	var gatherF64 []float64
	for k := range ranks {
		f := float32(k)
		sumF32[0] += f + 1
		sumF32[1] += 2 * (f + 1)
		sumF32[2] -= f + 1
		maxF64[0] = max(maxF64[0], 1.5*float64(k))
		maxF64[1] = max(maxF64[1], -float64(k))
		minI64[0] = min(minI64[0], int64(k))
		minI64[1] = min(minI64[1], int64(10-k))
		gatherI64 = append(gatherI64, int64(k), int64(k*k))
		gatherF64 = append(gatherF64, float64(k)+0.5)
	}
	large := func(i int) float32 {
		s := 0
		for k := range ranks {
			s += i%7 + k
		}
		return float32(s)
	}
	var largeSum float64
	for i := range largeLen {
		largeSum += float64(large(i))
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Rank", rep.Rank, r},
		{"Size", rep.Size, ranks},
		{"LocalRank", rep.LocalRank, r},
		{"LocalSize", rep.LocalSize, ranks},
		{"NodeRank", rep.NodeRank, 0},
		{"NumNodes", rep.NumNodes, 1},
		{"SumF32", rep.SumF32, sumF32[:]},
		{"MaxF64", rep.MaxF64, maxF64},
		{"MinI64", rep.MinI64, minI64},
		{"GatherI64", rep.GatherI64, gatherI64},
		{"GatherF64", rep.GatherF64, gatherF64},
		{"LargeSum", rep.LargeSum, largeSum},
		{"Bcast0", rep.Bcast0, "abcd"},
		{"BcastLast", rep.BcastLast, fmt.Sprintf("from rank %d", ranks-1)},
		{"AnyRank1", rep.AnyRank1, true},
		{"AnyNone", rep.AnyNone, false},
		{"Env", rep.Env, map[string]string{"RANK": strconv.Itoa(r), "WORLD_SIZE": strconv.Itoa(ranks),
			"LOCAL_RANK": strconv.Itoa(r), "LOCAL_WORLD_SIZE": strconv.Itoa(ranks), "NODE_RANK": "0",
			dist.SingleCopyVar: wantSingleCopy()}},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("rank %d: %s = %v, want %v", r, c.name, c.got, c.want)
		}
	}
	for i, got := range rep.LargeSamples {
		if want := large(i); got != want {
			t.Errorf("rank %d: large buffer [%d] = %v, want %v", r, i, got, want)
		}
	}
	if !slices.Contains(strings.Fields(rep.Describe), "MPI") || !strings.Contains(rep.Describe, fmt.Sprintf("rank %d of %d", r, ranks)) ||
		!strings.Contains(rep.Describe, "single copy "+wantSingleCopy()) {
		t.Errorf("rank %d: String() = %q, want it to name MPI, the shared-memory single copy and the rank", r, rep.Describe)
	}
}

// wantSingleCopy is what the ranks' dist.SingleCopyVar must be: this
// process's (mpirun passes it on) or, unset, dist.Init's default.
func wantSingleCopy() string {
	if v, ok := os.LookupEnv(dist.SingleCopyVar); ok {
		return v
	}
	return "none"
}
