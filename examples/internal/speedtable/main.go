// Command speedtable measures the training step of each zoo model in volt
// (default backend) and in PyTorch on the same machine in the same run, at
// 1 and 2 threads, and prints the table of medians and ratios that the
// README shows (issue 23).
//
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./examples/internal/speedtable [-rounds 5] [-steps 50] [-models mlp,cnn] [-threads 1,2]
//
// Every measurement is a fresh process: volt's with GOMAXPROCS=T (this
// program run again with -worker), PyTorch's torch_models.py at its best
// use of T cores: the fastest of every allocator found (glibc's malloc as
// it comes and with fixed thresholds, tcmalloc, jemalloc) with T torch
// threads over a one-thread OpenBLAS and with one torch thread over a
// T-thread OpenBLAS (torch_settings.go); the table names the setting that
// won. The
// two sides alternate within a round (which goes first alternates between
// rounds), so that both see the same machine; the ratio column is the
// median of the rounds' volt/PyTorch ratios. A step is volt's time between
// two training batch ends (its loader included) against PyTorch's forward,
// backward and optimizer step on a fixed batch, after 5 warm-up steps on
// both sides; with -fixed-batch volt's loader yields one collated batch
// again and again, so that both sides train on a fixed batch. PyTorch is Debian's python3-torch at /usr/bin/python3; install
// libopenblas0-pthread first, or torch falls back to the reference BLAS,
// and libtcmalloc-minimal4 and libjemalloc2 (a missing allocator is named
// under the table, and is an error under VOLT_REQUIRE_TOOLS=1).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/voltml/volt/examples/internal/zoo"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "speedtable:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	rounds, steps int
	fixedBatch    bool // volt trains on one batch repeated, as PyTorch does
	models        []zoo.Model
	threads       []int
	python        string
	script        string
	allocators    []allocator // the allocators PyTorch is tried on
	missing       []string    // the allocators not found, with their packages
}

func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("speedtable", flag.ContinueOnError)
	flags.SetOutput(errOut)
	rounds := flags.Int("rounds", 5, "paired rounds per model and thread count")
	steps := flags.Int("steps", 50, "timed steps per measurement (after 5 warm-up steps)")
	modelList := flags.String("models", "mlp,cnn,resnet,chargpt,seqclass,autoencoder", "comma-separated models")
	threadList := flags.String("threads", "1,2", "comma-separated thread counts")
	python := flags.String("python", "/usr/bin/python3", "a Python with torch")
	worker := flags.String("worker", "", "internal: time volt's step of this model once and print ms_per_step")
	fixedBatch := flags.Bool("fixed-batch", false, "volt trains on one collated batch repeated, as PyTorch's side does, instead of collating a batch per step")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *steps < 1 || *rounds < 1 {
		return fmt.Errorf("-steps and -rounds must be positive, got %d and %d", *steps, *rounds)
	}
	if *worker != "" {
		m, err := zoo.Named(*worker)
		if err != nil {
			return err
		}
		d, err := voltStepTime(m, *steps, *fixedBatch)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "ms_per_step=%.3f\n", float64(d.Nanoseconds())/1e6)
		return nil
	}
	o := options{rounds: *rounds, steps: *steps, fixedBatch: *fixedBatch, python: *python}
	for _, name := range strings.Split(*modelList, ",") {
		m, err := zoo.Named(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("-models: %w", err)
		}
		o.models = append(o.models, m)
	}
	for _, s := range strings.Split(*threadList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-threads: %q is not a positive thread count", s)
		}
		o.threads = append(o.threads, n)
	}
	script, err := torchScript()
	if err != nil {
		return err
	}
	o.script = script
	o.allocators, o.missing = availableAllocators()
	if err := requireAllocators(o.missing); err != nil {
		return err
	}
	table, err := measure(o, errOut)
	if err != nil {
		return err
	}
	table.write(out)
	return nil
}

// torchScript finds torch_models.py next to this command's source.
func torchScript() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if ok {
		if p := filepath.Join(filepath.Dir(file), "torch_models.py"); fileExists(p) {
			return p, nil
		}
	}
	if p := filepath.Join("examples", "internal", "speedtable", "torch_models.py"); fileExists(p) {
		return p, nil
	}
	return "", errors.New("torch_models.py not found: run from the repository root")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// cell is one model at one thread count: every round's step times.
type cell struct {
	volt, torch []float64 // ms per step, by round
	won         []string  // PyTorch's fastest setting, by round
}

// table is the measurement, by model then thread count.
type table struct {
	o     options
	cells map[string]map[int]*cell
}

// measure runs the rounds, printing each measurement to progress.
func measure(o options, progress io.Writer) (*table, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	t := &table{o: o, cells: map[string]map[int]*cell{}}
	for r := range o.rounds {
		for _, m := range o.models {
			for _, threads := range o.threads {
				c := t.at(m.Name, threads)
				sides := []func() error{
					func() error {
						args := []string{"-worker", m.Name, "-steps", strconv.Itoa(o.steps)}
						if o.fixedBatch {
							args = append(args, "-fixed-batch")
						}
						ms, err := stepMs(exec.Command(self, args...), "GOMAXPROCS="+strconv.Itoa(threads))
						c.volt = append(c.volt, ms)
						return err
					},
					func() error {
						ms, won, err := torchStepMs(o, m.Name, threads)
						c.torch = append(c.torch, ms)
						c.won = append(c.won, won.String())
						return err
					},
				}
				if r%2 == 1 {
					slices.Reverse(sides)
				}
				for _, side := range sides {
					if err := side(); err != nil {
						return nil, fmt.Errorf("%s, %d threads, round %d: %w", m.Name, threads, r+1, err)
					}
				}
				fmt.Fprintf(progress, "round %d %s t%d: volt %.2f ms, torch %.2f ms (%s)\n", r+1, m.Name, threads,
					c.volt[len(c.volt)-1], c.torch[len(c.torch)-1], c.won[len(c.won)-1])
			}
		}
	}
	return t, nil
}

func (t *table) at(model string, threads int) *cell {
	if t.cells[model] == nil {
		t.cells[model] = map[int]*cell{}
	}
	if t.cells[model][threads] == nil {
		t.cells[model][threads] = &cell{}
	}
	return t.cells[model][threads]
}

// torchStepMs is PyTorch's step at its best use of threads cores: the
// fastest of torchSettings, and the setting that gave it.
func torchStepMs(o options, model string, threads int) (float64, torchSetting, error) {
	best, won := 0.0, torchSetting{}
	for _, s := range torchSettings(o.allocators, threads) {
		ms, err := stepMs(exec.Command(o.python, o.script, "--model", model, "--threads", strconv.Itoa(s.torchThreads),
			"--steps", strconv.Itoa(o.steps)), s.env()...)
		if err != nil {
			return 0, s, fmt.Errorf("PyTorch (%s): %w", s, err)
		}
		if best == 0 || ms < best {
			best, won = ms, s
		}
	}
	return best, won, nil
}

var msPerStep = regexp.MustCompile(`ms_per_step=([0-9.]+)`)

// stepMs runs cmd with env added and returns the ms_per_step it printed.
func stepMs(cmd *exec.Cmd, env ...string) (float64, error) {
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	m := msPerStep.FindSubmatch(stdout.Bytes())
	if m == nil {
		return 0, fmt.Errorf("%s printed no ms_per_step:\n%s%s", strings.Join(cmd.Args, " "), stdout.String(), stderr.String())
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// median returns the median of xs (not empty).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2
}

// mostFrequent returns the value of xs (not empty) seen most often, the
// first of those seen equally often.
func mostFrequent(xs []string) string {
	counts := map[string]int{}
	for _, x := range xs {
		counts[x]++
	}
	best := xs[0]
	for _, x := range xs {
		if counts[x] > counts[best] {
			best = x
		}
	}
	return best
}

// ratios returns volt/torch per round.
func (c *cell) ratios() []float64 {
	r := make([]float64, len(c.volt))
	for i := range c.volt {
		r[i] = c.volt[i] / c.torch[i]
	}
	return r
}

// write prints the Markdown table: per model and thread count the median
// step times and the median of the paired ratios.
func (t *table) write(w io.Writer) {
	batches := "volt collating a batch per step, PyTorch on a fixed batch"
	if t.o.fixedBatch {
		batches = "both on a fixed batch"
	}
	fmt.Fprintf(w, "%d paired rounds of %d timed steps (%s), %s, GOMAXPROCS / torch threads:\n\n", t.o.rounds, t.o.steps, batches,
		time.Now().UTC().Format("2006-01-02"))
	header, rule := "| model |", "|---|"
	for _, n := range t.o.threads {
		header += fmt.Sprintf(" volt t%d ms | torch t%d ms | volt/torch t%d | torch's best t%d |", n, n, n, n)
		rule += "---:|---:|---:|---|"
	}
	fmt.Fprintln(w, header)
	fmt.Fprintln(w, rule)
	for _, m := range t.o.models {
		line := "| " + m.Name + " |"
		for _, n := range t.o.threads {
			c := t.cells[m.Name][n]
			line += fmt.Sprintf(" %.2f | %.2f | %.2f× | %s |", median(c.volt), median(c.torch), median(c.ratios()), mostFrequent(c.won))
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	names := make([]string, len(t.o.allocators))
	for i, a := range t.o.allocators {
		names[i] = a.name
	}
	fmt.Fprintf(w, "PyTorch's step is the fastest over the allocators %s, each with T torch threads over a 1-thread OpenBLAS (tT/b1) and, for T > 1, 1 torch thread over a T-thread OpenBLAS (t1/bT); \"torch's best\" is the setting that won most rounds.\n", strings.Join(names, ", "))
	for _, m := range t.o.missing {
		fmt.Fprintf(w, "Not tried, not found: %s.\n", m)
	}
	fmt.Fprintln(w)
	for _, m := range t.o.models {
		fmt.Fprintf(w, "- %s: %s\n", m.Name, m.About)
	}
}
