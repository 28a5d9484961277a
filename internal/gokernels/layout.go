package gokernels

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"unsafe"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
)

// PinnedComputeVersion is the version of github.com/gomlx/compute whose Go
// backend these kernels were written against and checked with; another
// version gets none of them.
const PinnedComputeVersion = "v0.1.14"

// EnvVar names the environment variable that, set to "off" before the
// program starts, keeps the backend's own executors.
const EnvVar = "VOLT_KERNELS"

// layout holds what probeLayout found: the offsets of the backend's Node
// and Buffer fields the executors read, and the dynamic types of the op
// parameters they decode.
type layout struct {
	nodeShape, nodeData     uintptr
	bufferShape, bufferFlat uintptr
	transposeData           reflect.Type // []int, the permutation
	padData, sliceData      reflect.Type // *ops.padNode, *ops.sliceNode
	convData                reflect.Type // *ops.convNode

	reduceWindowData, selectAndScatterData reflect.Type // *ops.reduceWindowNode, *ops.selectAndScatterNode
}

// lay is the layout the executors use, set by install.
var lay layout

// padParams mirrors the backend's padNode.
type padParams struct {
	axes []compute.PadAxis
}

// sliceParams mirrors the backend's sliceNode.
type sliceParams struct {
	starts, limits, strides []int
}

// checkEnvironment returns why the kernels must not be installed, if
// anything does: the environment variable, or another compute version.
func checkEnvironment() error {
	if os.Getenv(EnvVar) == "off" {
		return errors.New(EnvVar + "=off")
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return errors.New("the program has no build information to check the compute module's version in")
	}
	for _, dep := range info.Deps {
		if dep.Path != "github.com/gomlx/compute" {
			continue
		}
		if dep.Replace != nil {
			return fmt.Errorf("github.com/gomlx/compute is replaced by %s %s; these kernels were checked with %s only", dep.Replace.Path, dep.Replace.Version, PinnedComputeVersion)
		}
		if dep.Version != PinnedComputeVersion {
			return fmt.Errorf("github.com/gomlx/compute is %s; these kernels were checked with %s only", dep.Version, PinnedComputeVersion)
		}
		return nil
	}
	return errors.New("the program's build information does not list github.com/gomlx/compute")
}

// probeLayout builds each op the kernels run on a Go backend and
// reads, by reflection, the fields and types the executors rely on; any
// difference from what they were written against is an error.
func probeLayout() (l layout, err error) {
	backend, err := gobackend.New("")
	if err != nil {
		return l, err
	}
	defer backend.Finalize()
	builder := backend.Builder("gokernels_probe")
	fn := builder.Main()
	x, err := fn.Parameter("x", shapes.Make(dtypes.Float32, 2, 3), nil)
	if err != nil {
		return l, err
	}
	zero, err := fn.Constant([]float32{0})
	if err != nil {
		return l, err
	}
	pad, err := fn.Pad(x, zero, compute.PadAxis{Start: 1}, compute.PadAxis{End: 1})
	if err != nil {
		return l, err
	}
	slice, err := fn.Slice(x, []int{0, 1}, []int{2, 3}, []int{1, 1})
	if err != nil {
		return l, err
	}
	transpose, err := fn.Transpose(x, 1, 0)
	if err != nil {
		return l, err
	}
	pooled, err := fn.ReduceWindow(x, compute.ReduceOpMax, []int{2, 1}, []int{2, 1}, nil, nil, nil)
	if err != nil {
		return l, err
	}
	scattered, err := fn.SelectAndScatterMax(x, pooled, []int{2, 1}, []int{2, 1}, nil)
	if err != nil {
		return l, err
	}
	image, err := fn.Reshape(x, 1, 1, 2, 3)
	if err != nil {
		return l, err
	}
	conv, err := fn.ConvGeneral(image, image, compute.ConvolveAxesConfig{InputBatch: 0, InputChannels: 1,
		InputSpatial: []int{2, 3}, KernelInputChannels: 1, KernelOutputChannels: 0, KernelSpatial: []int{2, 3},
		OutputBatch: 0, OutputChannels: 1, OutputSpatial: []int{2, 3}}, nil, nil, nil, nil, 1, 1)
	if err != nil {
		return l, err
	}

	node := reflect.ValueOf(pad)
	if node.Kind() != reflect.Pointer || node.Elem().Kind() != reflect.Struct {
		return l, fmt.Errorf("the backend's values are %T, not pointers to its Node struct", pad)
	}
	nodeType := node.Elem().Type()
	if l.nodeShape, err = fieldOffset(nodeType, "Shape", reflect.TypeFor[shapes.Shape]()); err != nil {
		return l, err
	}
	if l.nodeData, err = fieldOffset(nodeType, "Data", reflect.TypeFor[any]()); err != nil {
		return l, err
	}
	dataOf := func(v compute.Value) reflect.Type {
		return reflect.ValueOf(v).Elem().FieldByName("Data").Elem().Type()
	}
	if l.transposeData = dataOf(transpose); l.transposeData != reflect.TypeFor[[]int]() {
		return l, fmt.Errorf("a Transpose node's data is %s, not []int", l.transposeData)
	}
	if l.padData, err = mirrored(dataOf(pad), reflect.TypeFor[padParams]()); err != nil {
		return l, fmt.Errorf("the backend's Pad: %w", err)
	}
	if l.sliceData, err = mirrored(dataOf(slice), reflect.TypeFor[sliceParams]()); err != nil {
		return l, fmt.Errorf("the backend's Slice: %w", err)
	}
	if l.reduceWindowData, err = mirrored(dataOf(pooled), reflect.TypeFor[reduceWindowParams]()); err != nil {
		return l, fmt.Errorf("the backend's ReduceWindow: %w", err)
	}
	if l.selectAndScatterData, err = mirrored(dataOf(scattered), reflect.TypeFor[selectAndScatterParams]()); err != nil {
		return l, fmt.Errorf("the backend's SelectAndScatter: %w", err)
	}
	if l.convData, err = mirrored(dataOf(conv), reflect.TypeFor[convParams]()); err != nil {
		return l, fmt.Errorf("the backend's ConvGeneral: %w", err)
	}

	buffer, err := backend.BufferFromFlatData(0, []float32{1, 2}, shapes.Make(dtypes.Float32, 2))
	if err != nil {
		return l, err
	}
	defer buffer.Finalize()
	bufferPtr := reflect.TypeOf(buffer)
	if bufferPtr.Kind() != reflect.Pointer || bufferPtr.Elem().Kind() != reflect.Struct {
		return l, fmt.Errorf("the backend's buffers are %s, not pointers to its Buffer struct", bufferPtr)
	}
	if l.bufferShape, err = fieldOffset(bufferPtr.Elem(), "RawShape", reflect.TypeFor[shapes.Shape]()); err != nil {
		return l, err
	}
	if l.bufferFlat, err = fieldOffset(bufferPtr.Elem(), "Flat", reflect.TypeFor[any]()); err != nil {
		return l, err
	}

	get, ok := reflect.TypeOf(backend).MethodByName("GetBuffer")
	want := reflect.FuncOf(
		[]reflect.Type{reflect.TypeOf(backend), reflect.TypeFor[shapes.Shape]()},
		[]reflect.Type{bufferPtr, reflect.TypeFor[error]()}, false)
	if !ok || get.Type != want {
		return l, fmt.Errorf("the backend's GetBuffer is %v, not %v", get.Type, want)
	}
	return l, nil
}

// fieldOffset returns the offset of the named field of t, an error unless
// it has type want.
func fieldOffset(t reflect.Type, name string, want reflect.Type) (uintptr, error) {
	f, ok := t.FieldByName(name)
	if !ok || len(f.Index) != 1 {
		return 0, fmt.Errorf("the backend's %s has no field %s", t, name)
	}
	if f.Type != want {
		return 0, fmt.Errorf("the backend's %s.%s is %s, not %s", t, name, f.Type, want)
	}
	return f.Offset, nil
}

// mirrored checks that got is a pointer to a struct whose fields have the
// types and offsets of mirror's, in order, and returns got.
func mirrored(got, mirror reflect.Type) (reflect.Type, error) {
	if got.Kind() != reflect.Pointer || got.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("the node's data is %s, not a pointer to a struct like %s", got, mirror)
	}
	s := got.Elem()
	if s.NumField() != mirror.NumField() || s.Size() != mirror.Size() {
		return nil, fmt.Errorf("the node's data %s has %d fields and %d bytes, not %d and %d like %s", got, s.NumField(), s.Size(), mirror.NumField(), mirror.Size(), mirror)
	}
	for i := range s.NumField() {
		f, m := s.Field(i), mirror.Field(i)
		if f.Type != m.Type || f.Offset != m.Offset {
			return nil, fmt.Errorf("the node's data %s has field %d %s %s at %d, not %s at %d", got, i, f.Name, f.Type, f.Offset, m.Type, m.Offset)
		}
	}
	return got, nil
}

// nodeShape returns an executing node's output shape.
func nodeShape(node unsafe.Pointer) shapes.Shape {
	return *(*shapes.Shape)(unsafe.Add(node, lay.nodeShape))
}

// nodeData returns an executing node's op parameters.
func nodeData(node unsafe.Pointer) any {
	return *(*any)(unsafe.Add(node, lay.nodeData))
}

// bufferShape returns a buffer's shape.
func bufferShape(buffer unsafe.Pointer) shapes.Shape {
	return *(*shapes.Shape)(unsafe.Add(buffer, lay.bufferShape))
}

// float32s returns a buffer's values, or nil unless they are float32.
func float32s(buffer unsafe.Pointer) []float32 {
	flat, _ := (*(*any)(unsafe.Add(buffer, lay.bufferFlat))).([]float32)
	return flat
}

// dataPointer returns the pointer held by v, a pointer type.
func dataPointer(v any) unsafe.Pointer { return reflect.ValueOf(v).UnsafePointer() }
