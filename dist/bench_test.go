package dist_test

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt/dist/mpitest"
)

// BenchmarkAllReduceMLPGradients launches 2 ranks that all-reduce (sum,
// float32) the gradients of the MNIST MLP 784-256-256-10 (269,322 floats)
// b.N times in each layout the probe knows (one call over a flat buffer,
// one call per parameter tensor, 256 KiB and 64 KiB buckets) and a single
// float, and reports rank 0's time per step for each as ns/step-<layout>.
// ns/op is dominated by starting mpirun; use -benchtime 2000x for figures.
func BenchmarkAllReduceMLPGradients(b *testing.B) {
	bin := mpitest.Build(b, "./internal/mpiprobe")
	res := mpitest.Run(b, 5*time.Minute, ranks, bin, "-mode", "bench", "-iters", strconv.Itoa(b.N))
	if res.Err != nil {
		b.Fatalf("mpirun: %v\n%s%s", res.Err, res.Stdout, res.Stderr)
	}
	found := 0
	sc := bufio.NewScanner(strings.NewReader(res.Stdout))
	for sc.Scan() {
		// BENCH <layout> round=<k> calls=<n> floats=<n> ns_per_step=<t>;
		// the last round's line of a layout wins.
		fields := strings.Fields(sc.Text())
		if len(fields) != 6 || fields[0] != "BENCH" {
			continue
		}
		ns, err := strconv.ParseFloat(strings.TrimPrefix(fields[5], "ns_per_step="), 64)
		if err != nil {
			b.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		b.ReportMetric(ns, "ns/step-"+fields[1])
		found++
	}
	if found == 0 {
		b.Fatalf("no BENCH lines in the probe's output:\n%s", res.Stdout)
	}
}
