package gokernels

import (
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
)

// Matrix products below serialDotMACs multiply-adds run on one core.
//
// The Go backend splits a float32 matrix product over its workers
// whenever GOMAXPROCS > 1, whatever its size, and each split product
// makes a 2,000-item work channel (96 KiB, allocated and cleared per
// call) and wakes goroutines on the other cores. On the small products of
// volt's MLP and autoencoder (at most 12.8M multiply-adds, 64×784×256)
// that costs more than the second core gives back: their steps took
// 0.70–0.76× and 0.93–0.96× as long with the backend's parallelism at 1
// (BenchmarkZooBackendModes at GOMAXPROCS=2, 2026-12-07, a 2-core AMD
// EPYC VM), while the transformer's larger products lost 1.28× that
// way. So a product below the threshold runs as the backend runs it at
// GOMAXPROCS=1: the backend's own implementation, handed a second Go
// backend whose worker pool allows one worker (its own buffer pool keeps
// the packing buffers). The bits do not change: the backend splits a
// product by output rows and columns, each element summed alike. With
// it, whole processes at GOMAXPROCS=2 (speedtable -worker, -fixed-batch)
// took the MLP's step from 1.10–1.34 to 0.65–0.78 ms and the
// autoencoder's from 1.80–1.94 to 1.20–1.44 ms; the transformer, the CNN
// and the LSTM were unchanged or faster; BenchmarkSerialDots times the
// products alone.
const serialDotMACs = 16 << 20

// The backend's table of matrix product implementations, reached by name.

//go:linkname findDotImplementation github.com/gomlx/compute/internal/gobackend/dot.FindRegisteredImplementation
func findDotImplementation(layout int, inputDType, outputDType dtypes.DType) unsafe.Pointer

// dotRegistration mirrors dot.ImplementationRegistration.
type dotRegistration struct {
	name     string
	implFn   any // a dot.DotGeneralExecFn[I, O]
	priority int
}

// dotExecFn is dot.DotGeneralExecFn[float32, float32] with its pointers
// untyped (*gobackend.Backend, *dot.NodeData) and its dot.Layout an int.
type dotExecFn func(backend unsafe.Pointer, layout int, lhs, rhs []float32,
	batchSize, lhsCrossSize, rhsCrossSize, contractingSize int, output []float32, nodeData unsafe.Pointer)

// The backend's layouts (dot.LayoutNonTransposed, dot.LayoutTransposed).
const dotLayouts = 2

var (
	// dotErr is installDot's result: nil when execDot wraps the
	// backend's float32 products.
	dotErr error
	// serialDots counts the products execDot ran on one core.
	serialDots atomic.Int64
	// dotOriginal are the backend's float32 implementations, per layout.
	dotOriginal [dotLayouts]dotExecFn
	// serialBackend is a Go backend whose worker pool allows one worker.
	serialBackend unsafe.Pointer
)

// installDot puts execDot in front of the backend's float32 matrix
// product implementations.
func installDot() error {
	b, err := gobackend.New("")
	if err != nil {
		return err
	}
	backend := reflect.ValueOf(b)
	workers := backend.Elem().FieldByName("Workers")
	if backend.Kind() != reflect.Pointer || !workers.IsValid() {
		return fmt.Errorf("the Go backend (%T) has no Workers field", b)
	}
	setMax := workers.MethodByName("SetMaxParallelism")
	if !setMax.IsValid() || setMax.Type().NumIn() != 1 || setMax.Type().In(0).Kind() != reflect.Int {
		return fmt.Errorf("the Go backend's worker pool (%v) has no SetMaxParallelism(int)", workers.Type())
	}
	setMax.Call([]reflect.Value{reflect.ValueOf(1)})
	serialBackend = backend.UnsafePointer()

	ours := dotExecFn(execDot)
	oursData := *(*unsafe.Pointer)(unsafe.Pointer(&ours))
	var regs [dotLayouts]*dotRegistration
	for layout := range dotLayouts {
		p := findDotImplementation(layout, dtypes.Float32, dtypes.Float32)
		if p == nil {
			return fmt.Errorf("the Go backend has no float32 matrix product for layout %d", layout)
		}
		reg := (*dotRegistration)(p)
		if err := checkDotExecFn(reflect.TypeOf(reg.implFn)); err != nil {
			return fmt.Errorf("the Go backend's float32 matrix product %q: %w", reg.name, err)
		}
		words := (*[2]unsafe.Pointer)(unsafe.Pointer(&reg.implFn))
		if words[1] == oursData {
			return fmt.Errorf("the Go backend's float32 matrix product for layout %d is already volt's", layout)
		}
		dotOriginal[layout] = *(*dotExecFn)(unsafe.Pointer(&words[1]))
		regs[layout] = reg
	}
	for _, reg := range regs {
		// The interface keeps its dynamic type (the backend asserts it)
		// and gets execDot as its value.
		(*[2]unsafe.Pointer)(unsafe.Pointer(&reg.implFn))[1] = oursData
	}
	return nil
}

// checkDotExecFn checks that t is a function of dotExecFn's shape.
func checkDotExecFn(t reflect.Type) error {
	want := reflect.TypeOf(dotExecFn(nil))
	if t == nil || t.Kind() != reflect.Func || t.NumIn() != want.NumIn() || t.NumOut() != 0 {
		return fmt.Errorf("its implementation is a %v, want a function like %v", t, want)
	}
	for i := range t.NumIn() {
		got, w := t.In(i), want.In(i)
		same := got.Kind() == w.Kind() || got.Kind() == reflect.Pointer && w.Kind() == reflect.UnsafePointer
		if !same || (w.Kind() == reflect.Slice && got.Elem().Kind() != reflect.Float32) {
			return fmt.Errorf("its implementation %v has argument %d of type %v, want %v", t, i, got, w)
		}
	}
	return nil
}

// execDot runs a float32 matrix product with the backend's own
// implementation, on one core when it is small (serialDotMACs).
func execDot(backend unsafe.Pointer, layout int, lhs, rhs []float32,
	batchSize, lhsCrossSize, rhsCrossSize, contractingSize int, output []float32, nodeData unsafe.Pointer) {
	if enabled.Load() && runtime.GOMAXPROCS(0) > 1 &&
		batchSize*lhsCrossSize*rhsCrossSize*contractingSize < serialDotMACs {
		backend = serialBackend
		serialDots.Add(1)
	}
	dotOriginal[layout](backend, layout, lhs, rhs, batchSize, lhsCrossSize, rhsCrossSize, contractingSize, output, nodeData)
}
