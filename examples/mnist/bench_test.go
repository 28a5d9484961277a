package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/dist/mpitest"
)

// benchSteps is the optimization steps of each measured run: enough for a
// stable median step, few enough for CI's one iteration.
const benchSteps = 300

var timingField = regexp.MustCompile(`(\w+)=([0-9.]+)`)

// BenchmarkDataParallel runs the example (built with -tags mpi) for
// benchSteps steps as one process and as 2 ranks (-devices 2; each rank
// gets GOMAXPROCS = cores / 2) and reports, from its -timing line, the
// training samples/s (median step), and for 2 ranks the median (and mean)
// time of a gradient all-reduce and the median's share of the median step
// (comm_%), and the same for the exchange alone, without waiting for the
// slower rank (exchange_us, exchange_%; DistributedStats.Exchange):
//
//	go test -bench DataParallel -benchtime 3x ./examples/mnist
func BenchmarkDataParallel(b *testing.B) {
	bin := mpitest.Build(b, ".")
	for _, ranks := range []int{1, 2} {
		b.Run(fmt.Sprintf("ranks=%d", ranks), func(b *testing.B) {
			var stepUS, allreduceUS, meanUS, exchangeUS float64
			for range b.N {
				f := runTiming(b, bin, ranks)
				stepUS += f["step_us"]
				allreduceUS += f["allreduce_us"]
				meanUS += f["allreduce_mean_us"]
				exchangeUS += f["exchange_us"]
			}
			stepUS /= float64(b.N)
			allreduceUS /= float64(b.N)
			meanUS /= float64(b.N)
			exchangeUS /= float64(b.N)
			const batch = 64
			b.ReportMetric(float64(batch*ranks)/(stepUS/1e6), "samples/s")
			b.ReportMetric(stepUS, "step_us")
			if ranks > 1 {
				b.ReportMetric(allreduceUS, "allreduce_us")
				b.ReportMetric(meanUS, "allreduce_mean_us")
				b.ReportMetric(100*allreduceUS/stepUS, "comm_%")
				b.ReportMetric(exchangeUS, "exchange_us")
				b.ReportMetric(100*exchangeUS/stepUS, "exchange_%")
			}
		})
	}
}

// runTiming runs the example on ranks ranks and returns its timing fields.
func runTiming(b *testing.B, bin string, ranks int) map[string]float64 {
	b.Helper()
	cmd := exec.Command(bin, "-devices", strconv.Itoa(ranks), "-epochs", "1", "-max-steps", strconv.Itoa(benchSteps),
		"-progress=false", "-timing", "-root", b.TempDir())
	cmd.Env = append(os.Environ(), dist.LaunchEnv()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	line := regexp.MustCompile(`timing: .*`).Find(out)
	if line == nil {
		b.Fatalf("no timing line:\n%s", out)
	}
	fields := map[string]float64{}
	for _, m := range timingField.FindAllSubmatch(line, -1) {
		fields[string(m[1])], _ = strconv.ParseFloat(string(m[2]), 64)
	}
	if ranks > 1 && fields["allreduces"] == 0 {
		b.Fatalf("a %d-rank run reports no all-reduce: %s", ranks, line)
	}
	// The fastest rank's median cannot exceed this rank's.
	if ranks > 1 && (fields["exchange_us"] <= 0 || fields["exchange_us"] > fields["allreduce_us"]) {
		b.Fatalf("a %d-rank run reports an exchange time outside (0, allreduce_us]: %s", ranks, line)
	}
	return fields
}
