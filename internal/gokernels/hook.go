package gokernels

import (
	"sync/atomic"
	"unsafe"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// The backend's registry and buffer pool, reached by name: see the package
// documentation and layout.go for the checks made before any is used.
//
// A node executor's signature is
// func(*gobackend.Backend, *gobackend.Node, []*gobackend.Buffer, []bool) (*gobackend.Buffer, error);
// every pointer to an internal type is an unsafe.Pointer here, which the
// calling convention passes alike.

//go:linkname setNodeExecutor github.com/gomlx/compute/internal/gobackend.SetNodeExecutor
func setNodeExecutor(opType compute.OpType, priority int, executor nodeExecutor)

//go:linkname getBuffer github.com/gomlx/compute/internal/gobackend.(*Backend).GetBuffer
func getBuffer(backend unsafe.Pointer, shape shapes.Shape) (unsafe.Pointer, error)

//go:linkname errFallback github.com/gomlx/compute/internal/gobackend.ErrFallback
var errFallback error

// nodeExecutor is gobackend.NodeExecutor with its pointers untyped.
type nodeExecutor func(backend, node unsafe.Pointer, inputs []unsafe.Pointer, inputsOwned []bool) (unsafe.Pointer, error)

// priorityUser is gobackend.PriorityUser: above every executor the backend
// registers itself.
const priorityUser = 100

// enabled is SetEnabled's switch; executors fall back while it is false.
var enabled atomic.Bool

// SetEnabled turns the installed kernels on or off (they start on when
// Installed returns nil) and returns the previous setting. Off, every
// executor here falls back to the backend's own (a node that ran one here
// goes back to the backend's at its next execution and stays there), and
// RunsConv and RunsPooling say no, so that graphs built meanwhile lower
// their convolutions and poolings. It is meant for tests and benchmarks
// that compare both in one process.
func SetEnabled(on bool) (was bool) { return enabled.Swap(on) }

// Installed returns nil when the kernels are installed in the Go backend,
// or why they are not (VOLT_KERNELS=off, another compute version, a layout
// that differs from the one they were written against).
func Installed() error { return installErr }

// installErr is install's result, kept for Installed.
var installErr = install()

// install checks the backend's layout and registers the executors.
func install() error {
	if err := checkEnvironment(); err != nil {
		return err
	}
	l, err := probeLayout()
	if err != nil {
		return err
	}
	lay = l
	// The matrix product hook stands apart: without it (a backend with no
	// float32 product of the expected shape) the executors still run.
	dotErr = installDot()
	setNodeExecutor(compute.OpTypeTranspose, priorityUser, execTranspose)
	setNodeExecutor(compute.OpTypePad, priorityUser, execPad)
	setNodeExecutor(compute.OpTypeSlice, priorityUser, execSlice)
	setNodeExecutor(compute.OpTypeConvGeneral, priorityUser, execConvGeneral)
	setNodeExecutor(compute.OpTypeReduceWindow, priorityUser, execReduceWindow)
	setNodeExecutor(compute.OpTypeSelectAndScatterMax, priorityUser, execSelectAndScatter)
	setNodeExecutor(compute.OpTypeSelectAndScatterMin, priorityUser, execSelectAndScatter)
	enabled.Store(true)
	return nil
}

// ran counts the nodes the kernels here executed, for the tests to tell
// that a case reached them.
var ran atomic.Int64
