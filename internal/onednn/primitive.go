package onednn

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// primitive is one created convolution (one Conv, one direction) with
// what executing it needs: the user tensors' memory descriptors, and for
// FormatBlocked the reorders into and out of oneDNN's chosen formats.
// Executions may run concurrently: each takes its own execCtx (stream,
// memory objects, scratchpad) from the pool.
type primitive struct {
	dir     direction
	threads int
	impl    string

	conv uintptr // dnnl_primitive_t
	// userMD and innerMD are, in argument order (two inputs, then the
	// output), the caller's layouts and the convolution's; reorder[i] is
	// the reorder between them (nil where they are equal).
	userMD, innerMD [3]memoryDesc
	reorder         [3]uintptr
	innerBytes      [3]uintptr
	// scratchMD are the scratchpads of the convolution and the three
	// reorders (user scratchpad mode); scratchBytes is the largest.
	scratchMD    [4]memoryDesc
	scratchBytes uintptr

	pool sync.Pool // *execCtx
}

// execCtx is one execution's private state.
type execCtx struct {
	stream     uintptr
	user       [3]uintptr
	inner      [3]uintptr
	scratch    [4]uintptr
	buffers    [3][]float32
	scratchBuf []float32
	// convArgs and reorderArgs are the arguments of the last execution,
	// here on the heap: dnnl_primitive_execute reads them by address.
	convArgs    [4]execArg
	reorderArgs [3]execArg
}

// key identifies a primitive: the whole normalized Conv (shapes,
// strides, parameters, thread count, format) and the direction.
type key struct {
	conv Conv
	dir  direction
}

var (
	cacheMu sync.Mutex
	cache   = map[key]*primitive{}
)

// cached returns the primitive of a normalized, valid Conv, creating it
// on first use.
func cached(c Conv, dir direction) (*primitive, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	k := key{c, dir}
	if p, ok := cache[k]; ok {
		return p, nil
	}
	p, err := create(c, dir)
	if err != nil {
		return nil, fmt.Errorf("onednn: creating the %v convolution of %+v: %w", dir, c, err)
	}
	cache[k] = p
	return p, nil
}

// CachedPrimitives returns how many primitives the cache holds.
func CachedPrimitives() int {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	return len(cache)
}

// CachedImpls returns, for each cached primitive, its direction,
// convolution and the name of the oneDNN implementation that runs it
// (e.g. "Forward {Batch:32 ...}: brgconv:avx512_core"), sorted.
func CachedImpls() []string {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	out := make([]string, 0, len(cache))
	for k, p := range cache {
		out = append(out, fmt.Sprintf("%v %+v: %s", k.dir, k.conv, p.impl))
	}
	slices.Sort(out)
	return out
}

// Impl returns the name of the oneDNN implementation that runs the
// Conv's given direction ("Forward", "BackwardData", "BackwardWeights"),
// creating its primitive if needed; for diagnostics and benchmarks.
func Impl(c Conv, dirName string) (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	c = c.normalized()
	if err := c.validate(); err != nil {
		return "", err
	}
	for _, d := range []direction{directionForward, directionBackwardData, directionBackwardWeights} {
		if d.String() == dirName {
			p, err := cached(c, d)
			if err != nil {
				return "", err
			}
			return p.impl, nil
		}
	}
	return "", fmt.Errorf("onednn: Impl: unknown direction %q", dirName)
}

// toDims converts up to 12 ints.
func toDims(v ...int) *dims {
	var d dims
	for i, x := range v {
		d[i] = int64(x)
	}
	return &d
}

// userDescs returns the memory descriptors of the Conv's src, weights
// and dst as the caller lays them out; grouped weights get oneDNN's
// 5-D form (G, O/G, I/G, KH, KW).
func userDescs(c Conv) ([3]memoryDesc, error) {
	var mds [3]memoryDesc
	s, w, d := c.srcDims(), c.weightsDims(), c.dstDims()
	ss, ws, ds := c.SrcStrides, c.WeightsStrides, c.DstStrides
	if err := check(lib.memoryDescInitByStrides(&mds[0], 4, toDims(s[:]...), dataTypeF32, toDims(ss[:]...)), "dnnl_memory_desc_init_by_strides(src)"); err != nil {
		return mds, err
	}
	wd, wst := toDims(w[:]...), toDims(ws[:]...)
	nw := int32(4)
	if c.Groups > 1 {
		g := c.Groups
		wd = toDims(g, w[0]/g, w[1], w[2], w[3])
		wst = toDims(ws[0]*(w[0]/g), ws[0], ws[1], ws[2], ws[3])
		nw = 5
	}
	if err := check(lib.memoryDescInitByStrides(&mds[1], nw, wd, dataTypeF32, wst), "dnnl_memory_desc_init_by_strides(weights)"); err != nil {
		return mds, err
	}
	if err := check(lib.memoryDescInitByStrides(&mds[2], 4, toDims(d[:]...), dataTypeF32, toDims(ds[:]...)), "dnnl_memory_desc_init_by_strides(dst)"); err != nil {
		return mds, err
	}
	return mds, nil
}

// anyDescs returns descriptors of the same dimensions in format `any`.
func anyDescs(c Conv) ([3]memoryDesc, error) {
	var mds [3]memoryDesc
	s, w, d := c.srcDims(), c.weightsDims(), c.dstDims()
	wd, nw := toDims(w[:]...), int32(4)
	if c.Groups > 1 {
		g := c.Groups
		wd, nw = toDims(g, w[0]/g, w[1], w[2], w[3]), 5
	}
	for i, x := range []struct {
		n int32
		d *dims
	}{{4, toDims(s[:]...)}, {nw, wd}, {4, toDims(d[:]...)}} {
		if err := check(lib.memoryDescInitByTag(&mds[i], x.n, x.d, dataTypeF32, formatTagAny), "dnnl_memory_desc_init_by_tag(any)"); err != nil {
			return mds, err
		}
	}
	return mds, nil
}

// convDesc initializes the operation descriptor of one direction with
// the given src, weights and dst descriptors (their diff counterparts
// for the backward directions).
func convDesc(c Conv, dir direction, prop int32, md *[3]memoryDesc) (*convolutionDesc, error) {
	cd := new(convolutionDesc)
	strides := toDims(c.Strides[0], c.Strides[1])
	dil := toDims(c.Dilations[0]-1, c.Dilations[1]-1) // oneDNN counts the added gaps
	padL, padR := toDims(c.PadLow[0], c.PadLow[1]), toDims(c.PadHigh[0], c.PadHigh[1])
	var status int32
	var name string
	switch dir {
	case directionForward:
		status = lib.convForwardDescInit(cd, prop, algConvolutionDirect, &md[0], &md[1], nil, &md[2], strides, dil, padL, padR)
		name = "dnnl_dilated_convolution_forward_desc_init"
	case directionBackwardData:
		status = lib.convBackwardDataDescInit(cd, algConvolutionDirect, &md[0], &md[1], &md[2], strides, dil, padL, padR)
		name = "dnnl_dilated_convolution_backward_data_desc_init"
	case directionBackwardWeights:
		status = lib.convBackwardWeightsDescInit(cd, algConvolutionDirect, &md[0], &md[1], nil, &md[2], strides, dil, padL, padR)
		name = "dnnl_dilated_convolution_backward_weights_desc_init"
	}
	return cd, check(status, name)
}

// withThreads runs f on a locked OS thread whose OpenMP thread count is
// n: libgomp keeps the count per OS thread, and oneDNN reads it both when
// it creates a primitive (its kernels are planned for that many threads)
// and when it executes one.
func withThreads(n int, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lib.ompSetNumThreads(int32(n))
	return f()
}

// create makes the primitive of a normalized, valid Conv.
func create(c Conv, dir direction) (*primitive, error) {
	p := &primitive{dir: dir, threads: c.Threads}
	err := withThreads(c.Threads, func() error { return p.init(c) })
	if err != nil {
		p.destroy()
		return nil, err
	}
	return p, nil
}

// init creates the convolution (and reorders) under the caller's thread
// count.
func (p *primitive) init(c Conv) error {
	user, err := userDescs(c)
	if err != nil {
		return err
	}
	want := user
	if c.Format == FormatBlocked || c.Format == FormatWeightsBlocked {
		if want, err = anyDescs(c); err != nil {
			return err
		}
	}
	if c.Format == FormatWeightsBlocked {
		want[0], want[2] = user[0], user[2]
	}
	var attr uintptr
	if err := check(lib.attrCreate(&attr), "dnnl_primitive_attr_create"); err != nil {
		return err
	}
	defer lib.attrDestroy(attr)
	if err := check(lib.attrSetScratchpadMode(attr, scratchpadModeUser), "dnnl_primitive_attr_set_scratchpad_mode(user)"); err != nil {
		return err
	}

	// The backward directions need the forward primitive descriptor as
	// a hint.
	var hint uintptr
	if p.dir != directionForward {
		fwd := want
		fd, err := convDesc(c, directionForward, propForwardTraining, &fwd)
		if err != nil {
			return err
		}
		if err := check(lib.primitiveDescCreate(&hint, unsafe.Pointer(fd), attr, lib.engine, 0), "dnnl_primitive_desc_create(forward hint)"); err != nil {
			return err
		}
		defer lib.primitiveDescDestroy(hint)
	}
	prop := int32(propForwardTraining)
	cd, err := convDesc(c, p.dir, prop, &want)
	if err != nil {
		return err
	}
	var pd uintptr
	if err := check(lib.primitiveDescCreate(&pd, unsafe.Pointer(cd), attr, lib.engine, hint), "dnnl_primitive_desc_create"); err != nil {
		return err
	}
	defer lib.primitiveDescDestroy(pd)

	var info *byte
	if err := check(lib.primitiveDescQuery(pd, queryImplInfoStr, 0, unsafe.Pointer(&info)), "dnnl_primitive_desc_query(impl_info_str)"); err == nil && info != nil {
		p.impl = cString(info)
	}

	// The convolution's descriptors of src, weights, dst (diff where the
	// direction takes or gives the gradient), then in argument order.
	queries := map[direction][3]int32{
		directionForward:         {querySrcMD, queryWeightsMD, queryDstMD},
		directionBackwardData:    {queryDiffSrcMD, queryWeightsMD, queryDiffDstMD},
		directionBackwardWeights: {querySrcMD, queryDiffWeightsMD, queryDiffDstMD},
	}[p.dir]
	for role := range 3 {
		md := lib.primitiveDescQueryMD(pd, queries[role], 0)
		if md == nil {
			return fmt.Errorf("dnnl_primitive_desc_query_md(%d) returned no descriptor", queries[role])
		}
		arg := argIndex(p.dir, role)
		p.innerMD[arg] = *md
		p.userMD[arg] = user[role]
	}
	if md := lib.primitiveDescQueryMD(pd, queryScratchpadMD, 0); md != nil {
		p.scratchMD[0] = *md
		p.scratchBytes = lib.memoryDescGetSize(md)
	}
	if err := check(lib.primitiveCreate(&p.conv, pd), "dnnl_primitive_create"); err != nil {
		return err
	}

	for i := range 3 {
		if lib.memoryDescEqual(&p.userMD[i], &p.innerMD[i]) != 0 {
			continue
		}
		p.innerBytes[i] = lib.memoryDescGetSize(&p.innerMD[i])
		from, to := &p.userMD[i], &p.innerMD[i]
		if i == 2 {
			from, to = to, from
		}
		var rpd uintptr
		if err := check(lib.reorderPrimitiveDesc(&rpd, from, lib.engine, to, lib.engine, attr), "dnnl_reorder_primitive_desc_create"); err != nil {
			return err
		}
		if md := lib.primitiveDescQueryMD(rpd, queryScratchpadMD, 0); md != nil {
			p.scratchMD[i+1] = *md
			p.scratchBytes = max(p.scratchBytes, lib.memoryDescGetSize(md))
		}
		err := check(lib.primitiveCreate(&p.reorder[i], rpd), "dnnl_primitive_create(reorder)")
		lib.primitiveDescDestroy(rpd)
		if err != nil {
			return err
		}
	}
	return nil
}

// argIndex returns the argument position (0, 1: inputs; 2: output) of
// the tensor role (0 src, 1 weights, 2 dst) in a direction.
func argIndex(dir direction, role int) int {
	for i, r := range tensorRoles[dir] {
		if r == role {
			return i
		}
	}
	panic("unreachable")
}

// argKinds are, per direction, the DNNL_ARG_* of the two inputs and the
// output.
var argKinds = [3][3]int32{
	directionForward:         {argSrc, argWeights, argDst},
	directionBackwardData:    {argDiffDst, argWeights, argDiffSrc},
	directionBackwardWeights: {argSrc, argDiffDst, argDiffWeights},
}

// destroy releases a primitive that failed to initialize.
func (p *primitive) destroy() {
	if p.conv != 0 {
		lib.primitiveDestroy(p.conv)
	}
	for _, r := range p.reorder {
		if r != 0 {
			lib.primitiveDestroy(r)
		}
	}
}

// alignedFloats returns a slice of at least n bytes starting on a
// 64-byte boundary.
func alignedFloats(n uintptr) []float32 {
	if n == 0 {
		return nil
	}
	words := int(n+3)/4 + 16
	buf := make([]float32, words)
	off := 0
	if r := uintptr(unsafe.Pointer(&buf[0])) % 64; r != 0 {
		off = int((64 - r) / 4)
	}
	return buf[off : off+int(n+3)/4]
}

// newCtx creates an execution context: a stream, memory objects with no
// data of their own, internal buffers and the scratchpad.
func (p *primitive) newCtx() (*execCtx, error) {
	x := &execCtx{}
	if err := check(lib.streamCreate(&x.stream, lib.engine, streamDefaultFlags), "dnnl_stream_create"); err != nil {
		return nil, err
	}
	for i := range 3 {
		if err := check(lib.memoryCreate(&x.user[i], &p.userMD[i], lib.engine, nil), "dnnl_memory_create"); err != nil {
			return nil, err
		}
		if p.reorder[i] != 0 {
			x.buffers[i] = alignedFloats(p.innerBytes[i])
			if err := check(lib.memoryCreate(&x.inner[i], &p.innerMD[i], lib.engine, unsafe.Pointer(&x.buffers[i][0])), "dnnl_memory_create"); err != nil {
				return nil, err
			}
		}
	}
	if p.scratchBytes > 0 {
		x.scratchBuf = alignedFloats(p.scratchBytes)
		for i := range p.scratchMD {
			if p.scratchMD[i] == (memoryDesc{}) || lib.memoryDescGetSize(&p.scratchMD[i]) == 0 {
				continue
			}
			if err := check(lib.memoryCreate(&x.scratch[i], &p.scratchMD[i], lib.engine, unsafe.Pointer(&x.scratchBuf[0])), "dnnl_memory_create(scratchpad)"); err != nil {
				return nil, err
			}
		}
	}
	return x, nil
}

// execute runs the primitive on the caller's slices (already checked
// against the Conv's strides).
func (p *primitive) execute(in0, in1, out []float32) error {
	x, _ := p.pool.Get().(*execCtx)
	if x == nil {
		var err error
		if x, err = p.newCtx(); err != nil {
			return err
		}
	}
	err := withThreads(p.threads, func() error { return p.executeIn(x, [3][]float32{in0, in1, out}) })
	runtime.KeepAlive(in0)
	runtime.KeepAlive(in1)
	runtime.KeepAlive(out)
	p.pool.Put(x)
	return err
}

func (p *primitive) executeIn(x *execCtx, data [3][]float32) error {
	convArgs := &x.convArgs
	for i := range 3 {
		if err := check(lib.memorySetDataHandle(x.user[i], unsafe.Pointer(unsafe.SliceData(data[i]))), "dnnl_memory_set_data_handle"); err != nil {
			return err
		}
		mem := x.user[i]
		if p.reorder[i] != 0 {
			mem = x.inner[i]
		}
		convArgs[i] = execArg{arg: argKinds[p.dir][i], memory: mem}
	}
	nargs := int32(3)
	if x.scratch[0] != 0 {
		convArgs[3] = execArg{arg: argScratchpad, memory: x.scratch[0]}
		nargs = 4
	}
	reorder := func(i int, from, to uintptr) error {
		args := &x.reorderArgs
		*args = [3]execArg{{arg: argReorderFrom, memory: from}, {arg: argReorderTo, memory: to}}
		n := int32(2)
		if x.scratch[i+1] != 0 {
			args[2] = execArg{arg: argScratchpad, memory: x.scratch[i+1]}
			n = 3
		}
		return check(lib.primitiveExecute(p.reorder[i], x.stream, n, &args[0]), "dnnl_primitive_execute(reorder)")
	}
	for i := range 2 {
		if p.reorder[i] != 0 {
			if err := reorder(i, x.user[i], x.inner[i]); err != nil {
				return err
			}
		}
	}
	if err := check(lib.primitiveExecute(p.conv, x.stream, nargs, &convArgs[0]), "dnnl_primitive_execute"); err != nil {
		return err
	}
	if p.reorder[2] != 0 {
		if err := reorder(2, x.inner[2], x.user[2]); err != nil {
			return err
		}
	}
	return check(lib.streamWait(x.stream), "dnnl_stream_wait")
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	var b []byte
	for ptr := unsafe.Pointer(p); *(*byte)(ptr) != 0; ptr = unsafe.Add(ptr, 1) {
		b = append(b, *(*byte)(ptr))
	}
	return string(b)
}
