package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt/examples/internal/zoo"
	"github.com/voltml/volt/internal/testenv"
)

// TestMain lets the test binary be its own volt worker (measure runs
// os.Executable() -worker NAME, which is this binary under go test).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-worker" {
		if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTableRunsBothSides: one round of every model at one thread, a few
// steps, both sides measured and the table printed with a finite positive
// time and ratio per model (PyTorch from Debian's python3-torch), and the
// PyTorch setting that won, one of those tried.
func TestTableRunsBothSides(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains every zoo model on both sides (about 2 minutes on 2 cores)")
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import torch").CombinedOutput(); err != nil {
		testenv.Missing(t, "/usr/bin/python3 cannot import torch: "+strings.TrimSpace(string(out)), "apt-get install python3-torch")
	}
	var out, progress bytes.Buffer
	if err := run([]string{"-rounds", "1", "-steps", "2", "-threads", "1"}, &out, &progress); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	allocs, missing := availableAllocators()
	if len(missing) > 0 {
		testenv.Missing(t, "PyTorch's fast allocators: "+strings.Join(missing, "; "), "apt-get install libtcmalloc-minimal4 libjemalloc2")
	}
	tried := map[string]bool{}
	for _, s := range torchSettings(allocs, 1) {
		tried[s.String()] = true
	}
	for _, m := range zoo.Models {
		row := regexp.MustCompile(`(?m)^\| ` + m.Name + ` \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+)× \| ([^|]+) \|$`).FindStringSubmatch(out.String())
		if row == nil {
			t.Errorf("no row for %s in\n%s", m.Name, out.String())
			continue
		}
		if won := row[4]; !tried[won] {
			t.Errorf("%s: PyTorch's winning setting %q is not one of those tried, %v", m.Name, won, tried)
		}
		for _, v := range row[1:4] {
			if v == "0.00" {
				t.Errorf("%s: a zero figure in %q", m.Name, row[0])
			}
		}
	}
}

// TestTorchSettings: every allocator found is tried with T torch threads
// over a 1-thread BLAS, and for T > 1 also with 1 torch thread over a
// T-thread BLAS; each setting's environment says so.
func TestTorchSettings(t *testing.T) {
	allocs := []allocator{{name: "glibc"}, {name: "tcmalloc", env: []string{"LD_PRELOAD=/x/libtcmalloc.so"}}}
	for _, tc := range []struct {
		threads int
		want    []string
	}{
		{1, []string{"glibc t1/b1", "tcmalloc t1/b1"}},
		{2, []string{"glibc t2/b1", "glibc t1/b2", "tcmalloc t2/b1", "tcmalloc t1/b2"}},
	} {
		var got []string
		for _, s := range torchSettings(allocs, tc.threads) {
			got = append(got, s.String())
			env := strings.Join(s.env(), " ")
			want := "OMP_NUM_THREADS=" + strconv.Itoa(s.torchThreads) + " OPENBLAS_NUM_THREADS=" + strconv.Itoa(s.blasThreads)
			if !strings.HasPrefix(env, want) || strings.Contains(env, "LD_PRELOAD") != (s.alloc.name == "tcmalloc") {
				t.Errorf("%s: environment %q", s, env)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("torchSettings(%d) = %v, want %v", tc.threads, got, tc.want)
		}
	}
}

// TestMostFrequent: the setting that won most rounds, the first on a tie.
func TestMostFrequent(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"a"}, "a"},
		{[]string{"a", "b", "b"}, "b"},
		{[]string{"a", "b", "b", "a"}, "a"},
	} {
		if got := mostFrequent(tc.in); got != tc.want {
			t.Errorf("mostFrequent(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestBadFlags: a wrong model or thread count is refused, naming what is valid.
func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"-models", "mlp,vgg"}, `no model "vgg"; the models are [mlp cnn resnet chargpt seqclass autoencoder]`},
		{[]string{"-threads", "0"}, `-threads: "0" is not a positive thread count`},
		{[]string{"-steps", "0"}, "-steps and -rounds must be positive"},
	} {
		err := run(tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("run(%v) = %v, want an error saying %q", tc.args, err, tc.says)
		}
	}
}
