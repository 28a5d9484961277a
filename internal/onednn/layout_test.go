package onednn

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestStructSizes compiles a C program against oneDNN's headers and
// checks the sizes this package mirrors; it skips without a C compiler or
// the headers (Debian's libdnnl-dev), and fails instead under
// VOLT_REQUIRE_ONEDNN=1 (CI installs both).
func TestStructSizes(t *testing.T) {
	skip := t.Skip
	if os.Getenv("VOLT_REQUIRE_ONEDNN") == "1" {
		skip = t.Fatal
	}
	if _, err := os.Stat("/usr/include/oneapi/dnnl/dnnl.h"); err != nil {
		skip("no oneDNN headers (Debian's libdnnl-dev)")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "sizes.c")
	prog := `#include <stdio.h>
#include <oneapi/dnnl/dnnl.h>
int main(void) {
	printf("%zu %zu %zu %d %d %d %d %d %d\n", sizeof(dnnl_memory_desc_t), sizeof(dnnl_convolution_desc_t),
		sizeof(dnnl_exec_arg_t), DNNL_MAX_NDIMS, (int)dnnl_f32, (int)dnnl_backward_weights,
		DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_SCRATCHPAD, (int)dnnl_query_scratchpad_md);
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sizes")
	if out, err := exec.Command(cc, src, "-o", bin).CombinedOutput(); err != nil {
		skip(fmt.Sprintf("cannot compile against the headers: %v\n%s", err, out))
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, f := range strings.Fields(string(out)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	want := []int{int(unsafe.Sizeof(memoryDesc{})), int(unsafe.Sizeof(convolutionDesc{})), int(unsafe.Sizeof(execArg{})),
		maxDims, dataTypeF32, propBackwardWeights, argDiffWeights, argScratchpad, queryScratchpadMD}
	names := []string{"sizeof(dnnl_memory_desc_t)", "sizeof(dnnl_convolution_desc_t)", "sizeof(dnnl_exec_arg_t)",
		"DNNL_MAX_NDIMS", "dnnl_f32", "dnnl_backward_weights", "DNNL_ARG_DIFF_WEIGHTS", "DNNL_ARG_SCRATCHPAD", "dnnl_query_scratchpad_md"}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("%s: the header says %v, the package has %d", names[i], got, want[i])
		}
	}
}

// TestInvalidConvErrors checks that bad descriptions and short slices
// are refused with errors naming the field.
func TestInvalidConvErrors(t *testing.T) {
	requireLibrary(t)
	good := Conv{Batch: 1, InChannels: 2, Height: 4, Width: 4, OutChannels: 2, KernelHeight: 3, KernelWidth: 3}
	cases := []struct {
		name string
		edit func(*Conv)
		want string
	}{
		{"zero batch", func(c *Conv) { c.Batch = 0 }, "Batch is 0"},
		{"groups", func(c *Conv) { c.Groups = 3 }, "not multiples of Groups 3"},
		{"kernel too big", func(c *Conv) { c.KernelHeight = 9 }, "output size"},
		{"negative padding", func(c *Conv) { c.PadLow[1] = -1 }, "padding of axis W"},
		{"bad stride", func(c *Conv) { c.SrcStrides = [4]int{32, 16, 4, 0} }, "SrcStrides"},
	}
	for _, k := range cases {
		t.Run(k.name, func(t *testing.T) {
			c := good
			k.edit(&c)
			err := Forward(c, make([]float32, 1000), make([]float32, 1000), make([]float32, 1000))
			if err == nil || !strings.Contains(err.Error(), k.want) {
				t.Fatalf("got %v, want an error containing %q", err, k.want)
			}
		})
	}
	err := Forward(good, make([]float32, 31), make([]float32, 36), make([]float32, 8))
	if err == nil || !strings.Contains(err.Error(), "src slice has 31 elements, its strides need 32") {
		t.Fatalf("short src: got %v", err)
	}
}
