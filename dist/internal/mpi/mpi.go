//go:build mpi

package mpi

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// Element is a type the binding reduces and gathers.
type Element interface{ float32 | float64 | int64 }

// state of the binding. mu is held for the whole of every MPI call, so
// calls never overlap (what MPI_THREAD_SERIALIZED requires).
var (
	mu        sync.Mutex
	calls     chan func() // to the MPI thread; nil before Init and after Finalize
	direct    bool        // SERIALIZED or better was granted: collectives run on the caller's thread
	finalized bool
)

// Init starts the MPI thread (a goroutine locked to its OS thread), calls
// MPI_Init_thread on it asking for level, and returns this process's ranks.
// It fails when called twice or after Finalize (MPI cannot restart), or
// when MPI grants less than ThreadFunneled.
//
// Init and Finalize always run on the MPI thread (MPI wants them on the same
// thread). The other calls run on it too when MPI grants only FUNNELED; when
// it grants SERIALIZED or more they run on the caller's thread, one at a
// time: handing each call to the MPI thread and back costs two thread
// wake-ups, measured at 16-260 µs per call on a loaded 2-core machine
// against 0.2-0.3 µs for a 1-element MPI_Allreduce made directly.
func Init(level ThreadLevel) (Info, error) {
	mu.Lock()
	defer mu.Unlock()
	switch {
	case finalized:
		return Info{}, errors.New("mpi.Init: MPI was finalized and cannot be initialised again")
	case calls != nil:
		return Info{}, errors.New("mpi.Init: already initialised")
	}
	ch := make(chan func())
	go serve(ch)
	var info Info
	err := call(ch, func() error {
		granted, err := cgoInit(level)
		if err != nil {
			return err
		}
		info.Threading = granted
		if info.Rank, info.Size, err = cgoRankSize(false); err != nil {
			return err
		}
		if info.LocalRank, info.LocalSize, err = cgoRankSize(true); err != nil {
			return err
		}
		info.Library, err = cgoLibraryVersion()
		return err
	})
	if err != nil {
		close(ch)
		return Info{}, err
	}
	if info.Threading < ThreadFunneled {
		_ = call(ch, cgoFinalize)
		close(ch)
		finalized = true
		return Info{}, errors.New("mpi.Init: MPI granted " + info.Threading.String() +
			"; volt needs at least MPI_THREAD_FUNNELED")
	}
	calls, direct = ch, info.Threading >= ThreadSerialized
	return info, nil
}

// serve runs the calls sent on ch on one locked OS thread. It never unlocks:
// when ch is closed the goroutine exits and the thread is discarded.
func serve(ch chan func()) {
	runtime.LockOSThread()
	for f := range ch {
		f()
	}
}

// call runs f on the MPI thread behind ch and returns its error.
func call(ch chan func(), f func() error) error {
	done := make(chan error, 1)
	ch <- func() { done <- f() }
	return <-done
}

// do runs the MPI call f, alone: on the caller's thread when SERIALIZED was
// granted, else on the MPI thread. It fails when MPI is not running.
func do(name string, f func() error) error {
	mu.Lock()
	defer mu.Unlock()
	switch {
	case calls == nil:
		return errors.New(name + ": MPI is not initialised (call Init first; not usable after Finalize)")
	case direct:
		return f()
	}
	return call(calls, f)
}

// AllReduce reduces buf element-wise across all ranks, in place
// (MPI_IN_PLACE): afterwards every rank holds the reduction. Every rank must
// pass the same length; buffers longer than MPI's int count are reduced in
// several calls.
func AllReduce[T Element](buf []T, op Op) error {
	dt := datatypeOf[T]()
	return do("mpi.AllReduce", func() error {
		for len(buf) > 0 {
			n := min(len(buf), math.MaxInt32)
			if err := cgoAllReduce(unsafe.Pointer(&buf[0]), n, dt, op); err != nil {
				return err
			}
			buf = buf[n:]
		}
		return nil
	})
}

// Broadcast copies root's buf into every other rank's buf, over the world
// or (local) the node-local communicator. Every rank must pass the same
// length.
func Broadcast(buf []byte, root int, local bool) error {
	return do("mpi.Broadcast", func() error {
		for len(buf) > 0 {
			n := min(len(buf), math.MaxInt32)
			if err := cgoBroadcast(unsafe.Pointer(&buf[0]), n, root, local); err != nil {
				return err
			}
			buf = buf[n:]
		}
		return nil
	})
}

// AllGather gathers send from every rank into recv, in rank order; recv
// must hold size*len(send) elements and every rank must pass the same
// len(send) (at most MPI's int count).
func AllGather[T Element](send, recv []T) error {
	if len(send) == 0 {
		return nil
	}
	if len(send) > math.MaxInt32 {
		return errors.New("mpi.AllGather: more elements per rank than MPI's int count")
	}
	dt := datatypeOf[T]()
	return do("mpi.AllGather", func() error {
		return cgoAllGather(unsafe.Pointer(&send[0]), unsafe.Pointer(&recv[0]), len(send), dt)
	})
}

// Barrier blocks until every rank has entered it.
func Barrier() error { return do("mpi.Barrier", cgoBarrier) }

// Abort asks the MPI runtime to end every process of the job with exit code
// code. It is called on the caller's thread, not the MPI thread: that thread
// may be blocked in a collective that will never complete, and the process
// is ending anyway. It returns only if MPI_Abort itself fails.
func Abort(code int) error { return cgoAbort(code) }

// Finalize finalizes MPI and stops the MPI thread. Calls after it fail.
func Finalize() error {
	mu.Lock()
	defer mu.Unlock()
	if calls == nil {
		return errors.New("mpi.Finalize: MPI is not initialised")
	}
	err := call(calls, cgoFinalize)
	close(calls)
	calls, direct, finalized = nil, false, true
	return err
}

// datatypeOf returns the MPI datatype of T.
func datatypeOf[T Element]() Datatype {
	var zero T
	switch any(zero).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	default:
		return Int64
	}
}
