package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PyTorch on CPU is timed at its best: on glibc's default allocator
// Debian's torch ran the MLP's step 3–4× slower than on tcmalloc (issue 38:
// 6.45 against 1.95 ms), and PyTorch's CPU performance guide tells its
// users to run on tcmalloc or jemalloc. So every PyTorch measurement tries
// each allocator found below with each thread setting and keeps the
// fastest, and the table names the setting that won.

// allocator is one way to run PyTorch's process: environment added to it.
type allocator struct {
	name    string
	env     []string
	lib     string // the preloaded library, "" for glibc's malloc
	install string // the Debian package that provides lib
}

// allocators are the allocators speedtable tries, in the order tried.
// glibc's malloc appears twice: as it comes, and with fixed mmap and trim
// thresholds, which keep freed blocks for reuse instead of returning them
// to the system after every step.
var allocators = []allocator{
	{name: "glibc"},
	{name: "glibc-fixed", env: []string{"MALLOC_MMAP_THRESHOLD_=268435456", "MALLOC_TRIM_THRESHOLD_=1073741824"}},
	{name: "tcmalloc", lib: "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", install: "libtcmalloc-minimal4"},
	{name: "jemalloc", lib: "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", install: "libjemalloc2"},
}

// availableAllocators returns the allocators whose library is on this
// machine, and a line naming each one missing with its package.
func availableAllocators() (found []allocator, missing []string) {
	for _, a := range allocators {
		if a.lib != "" {
			if !fileExists(a.lib) {
				missing = append(missing, fmt.Sprintf("%s (%s: apt-get install %s)", a.name, a.lib, a.install))
				continue
			}
			a.env = append(a.env, "LD_PRELOAD="+a.lib)
		}
		found = append(found, a)
	}
	return found, missing
}

// torchSetting is one way to run PyTorch's step on a number of cores.
type torchSetting struct {
	alloc        allocator
	torchThreads int // torch.set_num_threads and OMP_NUM_THREADS
	blasThreads  int // OPENBLAS_NUM_THREADS
}

// String names the setting as the table prints it, e.g. "tcmalloc t2/b1".
func (s torchSetting) String() string {
	return fmt.Sprintf("%s t%d/b%d", s.alloc.name, s.torchThreads, s.blasThreads)
}

// env is the environment the setting adds to PyTorch's process.
func (s torchSetting) env() []string {
	env := []string{"OMP_NUM_THREADS=" + strconv.Itoa(s.torchThreads), "OPENBLAS_NUM_THREADS=" + strconv.Itoa(s.blasThreads)}
	return append(env, s.alloc.env...)
}

// torchSettings are the settings tried for threads cores: every allocator
// with threads torch threads over a one-thread OpenBLAS and, for
// threads > 1, with one torch thread over a threads-thread OpenBLAS (both
// at once oversubscribe the cores: chargpt at 2 threads took 164 ms that
// way against 56 ms and 73 ms for the two).
func torchSettings(allocs []allocator, threads int) []torchSetting {
	var settings []torchSetting
	for _, a := range allocs {
		settings = append(settings, torchSetting{alloc: a, torchThreads: threads, blasThreads: 1})
		if threads > 1 {
			settings = append(settings, torchSetting{alloc: a, torchThreads: 1, blasThreads: threads})
		}
	}
	return settings
}

// requireAllocators fails when VOLT_REQUIRE_TOOLS=1 and an allocator is
// missing, so that CI never times PyTorch at less than its best.
func requireAllocators(missing []string) error {
	if len(missing) > 0 && os.Getenv("VOLT_REQUIRE_TOOLS") == "1" {
		return fmt.Errorf("VOLT_REQUIRE_TOOLS=1 and PyTorch's fast allocators are missing: %s", strings.Join(missing, "; "))
	}
	return nil
}
