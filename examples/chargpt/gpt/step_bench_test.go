package gpt_test

import (
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/voltml/volt/examples/chargpt/gpt"
	"github.com/voltml/volt/internal/golower"
)

// stepVariants are the wrapper settings and attention layers
// BenchmarkCharGPTStep compares, the earlier one first. GPT_BENCH_VARIANTS
// (a comma-separated list of names) picks some of them, e.g. for a CPU
// profile of one.
var stepVariants = []struct {
	name                          string
	lowering                      golower.Lowering
	gomlxAttention, maskedSoftmax bool
}{
	{"before", golower.Lowering{NoTransposePlans: true, NoDotLayouts: true, NoDenseVJP: true}, true, true},
	{"transposes", golower.Lowering{NoDotLayouts: true, NoDenseVJP: true}, true, true},
	{"dots", golower.Lowering{NoDenseVJP: true}, true, true},
	{"densevjp", golower.Lowering{}, true, true},
	{"layout", golower.Lowering{}, false, true},
	{"after", golower.Lowering{}, false, false},
}

// stepExec builds nanoGPT's CPU configuration's training step on backend:
// forward, loss, the gradient of every variable and a plain SGD update
// (the optimizer's elementwise work is the same in every variant).
func stepExec(b testing.TB, backend compute.Backend) (*model.Exec, []any) {
	cfg := gpt.CPU(80)
	store := model.NewStore()
	scope := store.RootScope().In("gpt").WithInitializer(initializer.RandomNormalFn(store.RootScope(), 0.02))
	exec, err := model.NewExec(backend, store, func(scope0 *model.Scope, tokens, targets *graph.Node) *graph.Node {
		g := tokens.Graph()
		store.SetTraining(g, true)
		loss := gpt.Loss(cfg.Logits(scope, tokens), targets)
		var vars []*model.Variable
		var nodes []*graph.Node
		for v := range store.IterVariables() {
			if v.DType() != dtypes.Float32 {
				continue // the initializers' random state
			}
			vars = append(vars, v)
			nodes = append(nodes, v.NodeValue(g))
		}
		grads := graph.Gradient(loss, nodes...)
		for i, v := range vars {
			v.SetNodeValue(graph.Sub(nodes[i], graph.MulScalar(grads[i], 1e-3)))
		}
		return loss
	})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const batch = 12
	tokens := make([][]int32, batch)
	targets := make([][]int32, batch)
	for i := range batch {
		tokens[i] = make([]int32, cfg.Block)
		targets[i] = make([]int32, cfg.Block)
		for j := range cfg.Block {
			tokens[i][j] = int32(rng.IntN(cfg.Vocab))
			targets[i][j] = int32(rng.IntN(cfg.Vocab))
		}
	}
	return exec, []any{tokens, targets}
}

// BenchmarkCharGPTStep times examples/chargpt's training step (nanoGPT's
// CPU configuration, batch 12) per wrapper variant. Each iteration runs
// every variant in turn, so that they see the same machine; it reports
// each one's wall and CPU milliseconds and the ratios of the last
// variant's to the first's.
func BenchmarkCharGPTStep(b *testing.B) {
	type prepared struct {
		name                          string
		exec                          *model.Exec
		inputs                        []any
		gomlxAttention, maskedSoftmax bool
	}
	var runs []prepared
	picked := os.Getenv("GPT_BENCH_VARIANTS")
	for _, v := range stepVariants {
		if picked != "" && !strings.Contains(","+picked+",", ","+v.name+",") {
			continue
		}
		exec, inputs := stepExec(b, golower.WrapWith(gobackend.GetBackend(), golower.DefaultRules(), v.lowering))
		runs = append(runs, prepared{v.name, exec, inputs, v.gomlxAttention, v.maskedSoftmax})
	}
	call := func(b *testing.B, r prepared) {
		outs, err := r.exec.Call(r.inputs...)
		if err != nil {
			b.Fatal(err)
		}
		for _, out := range outs {
			out.FinalizeAll()
		}
	}
	for _, r := range runs {
		restoreAttention, restoreSoftmax := gpt.UseGoMLXAttention(r.gomlxAttention), gpt.UseMaskedSoftmax(r.maskedSoftmax)
		call(b, r) // builds the graph and compiles
		restoreAttention()
		restoreSoftmax()
		call(b, r)
	}
	wall := make([]time.Duration, len(runs))
	cpu := make([]time.Duration, len(runs))
	for b.Loop() {
		for i, r := range runs {
			start, cpuStart := time.Now(), processCPUTime(b)
			call(b, r)
			wall[i] += time.Since(start)
			cpu[i] += processCPUTime(b) - cpuStart
		}
	}
	for i, r := range runs {
		b.ReportMetric(float64(wall[i].Microseconds())/1e3/float64(b.N), r.name+"-ms/op")
		b.ReportMetric(float64(cpu[i].Microseconds())/1e3/float64(b.N), r.name+"-cpu-ms/op")
	}
	if last := len(runs) - 1; last > 0 {
		b.ReportMetric(float64(wall[last])/float64(wall[0]), "last/first")
		b.ReportMetric(float64(cpu[last])/float64(cpu[0]), "last/first-cpu")
	}
}

// processCPUTime is the CPU time (user and system) of this process so far.
func processCPUTime(b testing.TB) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
