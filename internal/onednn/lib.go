package onednn

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libraryName is the shared library Available loads: Debian's libdnnl2
// (oneDNN 2.6, built on libgomp's OpenMP). The C API mirrored here is
// that version's dnnl.h.
const libraryName = "libdnnl.so.2"

// openmpName is the OpenMP runtime libdnnl.so.2 is linked with; its
// omp_set_num_threads sets the thread count of the calling OS thread's
// parallel regions.
const openmpName = "libgomp.so.1"

// Sizes of the C structures the API writes into, from oneDNN 2.6's
// dnnl_types.h (checked with sizeof by TestStructSizes when a C compiler
// and the headers are present).
const (
	memoryDescSize      = 696  // sizeof(dnnl_memory_desc_t)
	convolutionDescSize = 5976 // sizeof(dnnl_convolution_desc_t)
	maxDims             = 12   // DNNL_MAX_NDIMS
)

// Enumeration values of oneDNN 2.6 (dnnl_types.h).
const (
	statusSuccess = 0

	dataTypeF32 = 3 // dnnl_f32

	formatTagAny = 1 // dnnl_format_tag_any

	propForwardTraining = 64  // dnnl_forward_training
	propBackwardData    = 160 // dnnl_backward_data
	propBackwardWeights = 192 // dnnl_backward_weights

	algConvolutionDirect = 1 // dnnl_convolution_direct

	scratchpadModeUser = 1 // dnnl_scratchpad_mode_user

	engineCPU          = 1 // dnnl_cpu
	streamDefaultFlags = 1 // dnnl_stream_default_flags

	queryImplInfoStr     = 8   // dnnl_query_impl_info_str
	querySrcMD           = 129 // dnnl_query_src_md
	queryDiffSrcMD       = 130 // dnnl_query_diff_src_md
	queryWeightsMD       = 131 // dnnl_query_weights_md
	queryDiffWeightsMD   = 132 // dnnl_query_diff_weights_md
	queryDstMD           = 133 // dnnl_query_dst_md
	queryDiffDstMD       = 134 // dnnl_query_diff_dst_md
	queryScratchpadMD    = 136 // dnnl_query_scratchpad_md
	argSrc               = 1   // DNNL_ARG_SRC (also DNNL_ARG_FROM)
	argDst               = 17  // DNNL_ARG_DST (also DNNL_ARG_TO)
	argWeights           = 33  // DNNL_ARG_WEIGHTS
	argScratchpad        = 80  // DNNL_ARG_SCRATCHPAD
	argDiffSrc           = 129 // DNNL_ARG_DIFF_SRC
	argDiffDst           = 145 // DNNL_ARG_DIFF_DST
	argDiffWeights       = 161 // DNNL_ARG_DIFF_WEIGHTS
	argReorderFrom       = argSrc
	argReorderTo         = argDst
	disableEnvValue      = "off"
	disableEnvName       = "VOLT_ONEDNN"
	memoryDescAlignWords = memoryDescSize / 8
)

// memoryDesc mirrors dnnl_memory_desc_t as opaque, 8-byte aligned bytes:
// volt only fills it through dnnl_memory_desc_init_by_strides/_by_tag
// and passes it by pointer.
type memoryDesc [memoryDescAlignWords]uint64

// convolutionDesc mirrors dnnl_convolution_desc_t as opaque bytes.
type convolutionDesc [convolutionDescSize / 8]uint64

// dims mirrors dnnl_dims_t.
type dims [maxDims]int64

// execArg mirrors dnnl_exec_arg_t {int arg; dnnl_memory_t memory;}.
type execArg struct {
	arg    int32
	_      int32
	memory uintptr
}

// api holds the bound C functions of libdnnl and libgomp.
type api struct {
	engineCreate            func(engine *uintptr, kind int32, index uintptr) int32
	streamCreate            func(stream *uintptr, engine uintptr, flags uint32) int32
	streamWait              func(stream uintptr) int32
	memoryDescInitByStrides func(md *memoryDesc, ndims int32, d *dims, dataType int32, strides *dims) int32
	memoryDescInitByTag     func(md *memoryDesc, ndims int32, d *dims, dataType int32, tag int32) int32
	memoryDescEqual         func(a, b *memoryDesc) int32
	memoryDescGetSize       func(md *memoryDesc) uintptr
	memoryCreate            func(memory *uintptr, md *memoryDesc, engine uintptr, handle unsafe.Pointer) int32
	memorySetDataHandle     func(memory uintptr, handle unsafe.Pointer) int32
	memoryDestroy           func(memory uintptr) int32
	convForwardDescInit     func(cd *convolutionDesc, prop, alg int32, src, weights, bias, dst *memoryDesc,
		strides, dilates, padL, padR *dims) int32
	convBackwardDataDescInit func(cd *convolutionDesc, alg int32, diffSrc, weights, diffDst *memoryDesc,
		strides, dilates, padL, padR *dims) int32
	convBackwardWeightsDescInit func(cd *convolutionDesc, alg int32, src, diffWeights, diffBias, diffDst *memoryDesc,
		strides, dilates, padL, padR *dims) int32
	attrCreate            func(attr *uintptr) int32
	attrDestroy           func(attr uintptr) int32
	attrSetScratchpadMode func(attr uintptr, mode int32) int32
	primitiveDescCreate   func(pd *uintptr, opDesc unsafe.Pointer, attr, engine, hint uintptr) int32
	primitiveDescDestroy  func(pd uintptr) int32
	primitiveDescQuery    func(pd uintptr, what, index int32, result unsafe.Pointer) int32
	primitiveDescQueryMD  func(pd uintptr, what, index int32) *memoryDesc
	reorderPrimitiveDesc  func(pd *uintptr, src *memoryDesc, srcEngine uintptr, dst *memoryDesc, dstEngine, attr uintptr) int32
	primitiveCreate       func(p *uintptr, pd uintptr) int32
	primitiveExecute      func(p, stream uintptr, nargs int32, args *execArg) int32
	primitiveDestroy      func(p uintptr) int32
	ompSetNumThreads      func(n int32)
	ompGetMaxThreads      func() int32
	engine                uintptr
}

var (
	loadOnce sync.Once
	loadErr  error
	lib      api
)

// Available reports whether oneDNN can be used: nil, or why not (the
// environment variable VOLT_ONEDNN is "off", libdnnl.so.2 or its OpenMP
// runtime cannot be loaded, a symbol is missing, or the CPU engine cannot
// be created). It loads the library on its first call.
func Available() error {
	if Disabled() {
		return fmt.Errorf("onednn: disabled by %s=%s", disableEnvName, disableEnvValue)
	}
	loadOnce.Do(func() { loadErr = load() })
	if unavailableForTest != nil {
		return unavailableForTest
	}
	return loadErr
}

// Disabled reports whether the environment turns oneDNN off
// (VOLT_ONEDNN=off).
func Disabled() bool { return os.Getenv(disableEnvName) == disableEnvValue }

// unavailableForTest, when set, is what Available returns.
var unavailableForTest error

// SetUnavailableForTest makes Available return err (as on a machine
// without the library) until restore is called; not safe while
// convolutions run.
func SetUnavailableForTest(err error) (restore func()) {
	old := unavailableForTest
	unavailableForTest = err
	return func() { unavailableForTest = old }
}

// load opens the libraries, binds every function the package calls and
// creates the CPU engine.
func load() error {
	dnnl, err := purego.Dlopen(libraryName, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("onednn: loading %s: %w", libraryName, err)
	}
	gomp, err := purego.Dlopen(openmpName, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("onednn: loading %s (the OpenMP runtime of %s): %w", openmpName, libraryName, err)
	}
	var missing []error
	bind := func(handle uintptr, libName string, fptr any, name string) {
		sym, err := purego.Dlsym(handle, name)
		if err != nil {
			missing = append(missing, fmt.Errorf("onednn: %s has no symbol %s: %w", libName, name, err))
			return
		}
		purego.RegisterFunc(fptr, sym)
	}
	d := func(fptr any, name string) { bind(dnnl, libraryName, fptr, name) }
	var a api
	d(&a.engineCreate, "dnnl_engine_create")
	d(&a.streamCreate, "dnnl_stream_create")
	d(&a.streamWait, "dnnl_stream_wait")
	d(&a.memoryDescInitByStrides, "dnnl_memory_desc_init_by_strides")
	d(&a.memoryDescInitByTag, "dnnl_memory_desc_init_by_tag")
	d(&a.memoryDescEqual, "dnnl_memory_desc_equal")
	d(&a.memoryDescGetSize, "dnnl_memory_desc_get_size")
	d(&a.memoryCreate, "dnnl_memory_create")
	d(&a.memorySetDataHandle, "dnnl_memory_set_data_handle")
	d(&a.memoryDestroy, "dnnl_memory_destroy")
	d(&a.convForwardDescInit, "dnnl_dilated_convolution_forward_desc_init")
	d(&a.convBackwardDataDescInit, "dnnl_dilated_convolution_backward_data_desc_init")
	d(&a.convBackwardWeightsDescInit, "dnnl_dilated_convolution_backward_weights_desc_init")
	d(&a.attrCreate, "dnnl_primitive_attr_create")
	d(&a.attrDestroy, "dnnl_primitive_attr_destroy")
	d(&a.attrSetScratchpadMode, "dnnl_primitive_attr_set_scratchpad_mode")
	d(&a.primitiveDescCreate, "dnnl_primitive_desc_create")
	d(&a.primitiveDescDestroy, "dnnl_primitive_desc_destroy")
	d(&a.primitiveDescQuery, "dnnl_primitive_desc_query")
	d(&a.primitiveDescQueryMD, "dnnl_primitive_desc_query_md")
	d(&a.reorderPrimitiveDesc, "dnnl_reorder_primitive_desc_create")
	d(&a.primitiveCreate, "dnnl_primitive_create")
	d(&a.primitiveExecute, "dnnl_primitive_execute")
	d(&a.primitiveDestroy, "dnnl_primitive_destroy")
	bind(gomp, openmpName, &a.ompSetNumThreads, "omp_set_num_threads")
	bind(gomp, openmpName, &a.ompGetMaxThreads, "omp_get_max_threads")
	if len(missing) > 0 {
		return errors.Join(missing...)
	}
	bindHotCalls(&a, dnnl, gomp)
	if err := check(a.engineCreate(&a.engine, engineCPU, 0), "dnnl_engine_create(cpu)"); err != nil {
		return err
	}
	lib = a
	return nil
}

// bindHotCalls rebinds the calls every execution makes through
// purego.SyscallN: a function bound by purego.RegisterFunc goes through
// reflection and allocated ~5 times per call (a 1×1 convolution's
// execution made 30 allocations, a two-chunk one 69); SyscallN makes none.
// Their symbols were found by load already. Pointer arguments point into
// the Go heap (execution contexts and the caller's slices, kept alive
// across the call), which does not move.
func bindHotCalls(a *api, dnnl, gomp uintptr) {
	sym := func(handle uintptr, name string) uintptr {
		s, err := purego.Dlsym(handle, name)
		if err != nil {
			panic(fmt.Sprintf("onednn: %s, bound a moment ago, is gone: %v", name, err))
		}
		return s
	}
	setDataHandle, execute, wait := sym(dnnl, "dnnl_memory_set_data_handle"), sym(dnnl, "dnnl_primitive_execute"), sym(dnnl, "dnnl_stream_wait")
	setThreads := sym(gomp, "omp_set_num_threads")
	a.memorySetDataHandle = func(memory uintptr, handle unsafe.Pointer) int32 {
		r, _, _ := purego.SyscallN(setDataHandle, memory, uintptr(handle))
		return int32(r)
	}
	a.primitiveExecute = func(p, stream uintptr, nargs int32, args *execArg) int32 {
		r, _, _ := purego.SyscallN(execute, p, stream, uintptr(nargs), uintptr(unsafe.Pointer(args)))
		return int32(r)
	}
	a.streamWait = func(stream uintptr) int32 {
		r, _, _ := purego.SyscallN(wait, stream)
		return int32(r)
	}
	a.ompSetNumThreads = func(n int32) { purego.SyscallN(setThreads, uintptr(n)) }
}

// statusNames are dnnl_status_t's values.
var statusNames = map[int32]string{
	0: "success", 1: "out_of_memory", 2: "invalid_arguments", 3: "unimplemented",
	4: "iterator_ends", 5: "runtime_error", 6: "not_required",
}

// check turns a dnnl_status_t into an error naming the call.
func check(status int32, call string) error {
	if status == statusSuccess {
		return nil
	}
	name, ok := statusNames[status]
	if !ok {
		name = fmt.Sprintf("status %d", status)
	}
	return fmt.Errorf("onednn: %s: %s", call, name)
}
