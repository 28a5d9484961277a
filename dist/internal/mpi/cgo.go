//go:build mpi

package mpi

/*
#cgo pkg-config: ompi
#include <mpi.h>
#include <stdlib.h>

// The handles are macros (pointers to globals in OpenMPI, integers in
// MPICH), so they are reached through these helpers.

static MPI_Comm volt_local = MPI_COMM_NULL;

static MPI_Comm volt_comm(int local) { return local ? volt_local : MPI_COMM_WORLD; }

static int volt_init(int want, int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, want, provided);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &volt_local);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(volt_local, MPI_ERRORS_RETURN);
}

static int volt_thread_level(int which) {
	switch (which) {
	case 0: return MPI_THREAD_SINGLE;
	case 1: return MPI_THREAD_FUNNELED;
	case 2: return MPI_THREAD_SERIALIZED;
	default: return MPI_THREAD_MULTIPLE;
	}
}

static int volt_rank(int local, int *out) { return MPI_Comm_rank(volt_comm(local), out); }
static int volt_size(int local, int *out) { return MPI_Comm_size(volt_comm(local), out); }

static MPI_Datatype volt_type(int t) {
	switch (t) {
	case 0: return MPI_FLOAT;
	case 1: return MPI_DOUBLE;
	case 2: return MPI_INT64_T;
	default: return MPI_BYTE;
	}
}

static MPI_Op volt_op(int op) {
	switch (op) {
	case 0: return MPI_SUM;
	case 1: return MPI_MAX;
	default: return MPI_MIN;
	}
}

static int volt_allreduce(void *buf, int count, int t, int op) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, count, volt_type(t), volt_op(op), MPI_COMM_WORLD);
}

static int volt_bcast(void *buf, int count, int root, int local) {
	return MPI_Bcast(buf, count, MPI_BYTE, root, volt_comm(local));
}

static int volt_allgather(void *send, void *recv, int count, int t) {
	return MPI_Allgather(send, count, volt_type(t), recv, count, volt_type(t), MPI_COMM_WORLD);
}

static int volt_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

static int volt_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }

static int volt_finalize(void) {
	if (volt_local != MPI_COMM_NULL) MPI_Comm_free(&volt_local);
	return MPI_Finalize();
}

static void volt_error_string(int code, char *buf, int *len) {
	if (MPI_Error_string(code, buf, len) != MPI_SUCCESS) *len = 0;
}

static int volt_max_error_string(void) { return MPI_MAX_ERROR_STRING; }

static int volt_library_version(char *buf, int *len) { return MPI_Get_library_version(buf, len); }
static int volt_max_library_version(void) { return MPI_MAX_LIBRARY_VERSION_STRING; }
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// cgoInit calls MPI_Init_thread asking for level, sets MPI_ERRORS_RETURN and
// splits the shared-memory (node-local) communicator. It returns the
// granted level.
func cgoInit(level ThreadLevel) (ThreadLevel, error) {
	var provided C.int
	if err := check("MPI_Init_thread", C.volt_init(C.volt_thread_level(C.int(level)), &provided)); err != nil {
		return 0, err
	}
	for l := ThreadSingle; l <= ThreadMultiple; l++ {
		if C.volt_thread_level(C.int(l)) == provided {
			return l, nil
		}
	}
	return 0, fmt.Errorf("MPI_Init_thread: unknown threading level %d granted", int(provided))
}

// cgoRankSize returns this process's rank and the size of the world (local
// false) or of the node-local communicator (local true).
func cgoRankSize(local bool) (rank, size int, err error) {
	var r, s C.int
	l := boolInt(local)
	if err := check("MPI_Comm_rank", C.volt_rank(l, &r)); err != nil {
		return 0, 0, err
	}
	if err := check("MPI_Comm_size", C.volt_size(l, &s)); err != nil {
		return 0, 0, err
	}
	return int(r), int(s), nil
}

// cgoAllReduce reduces count elements of type dt at p in place.
func cgoAllReduce(p unsafe.Pointer, count int, dt Datatype, op Op) error {
	return check("MPI_Allreduce", C.volt_allreduce(p, C.int(count), C.int(dt), C.int(op)))
}

// cgoBroadcast broadcasts count bytes at p from root over the world or the
// node-local communicator.
func cgoBroadcast(p unsafe.Pointer, count, root int, local bool) error {
	return check("MPI_Bcast", C.volt_bcast(p, C.int(count), C.int(root), boolInt(local)))
}

// cgoAllGather gathers count elements of type dt from every rank into recv
// (size*count elements), in rank order.
func cgoAllGather(send, recv unsafe.Pointer, count int, dt Datatype) error {
	return check("MPI_Allgather", C.volt_allgather(send, recv, C.int(count), C.int(dt)))
}

// cgoBarrier blocks until every rank has entered it.
func cgoBarrier() error { return check("MPI_Barrier", C.volt_barrier()) }

// cgoAbort asks the MPI runtime to end every process of the job with code.
func cgoAbort(code int) error { return check("MPI_Abort", C.volt_abort(C.int(code))) }

// cgoFinalize frees the node-local communicator and finalizes MPI.
func cgoFinalize() error { return check("MPI_Finalize", C.volt_finalize()) }

// check turns an MPI return code into a Go error naming the call.
func check(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	buf := make([]byte, int(C.volt_max_error_string())+1)
	var n C.int
	C.volt_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return &Error{Call: call, Code: int(rc), Message: string(buf[:int(n)])}
}

// cgoLibraryVersion returns MPI_Get_library_version's string.
func cgoLibraryVersion() (string, error) {
	buf := make([]byte, int(C.volt_max_library_version())+1)
	var n C.int
	if err := check("MPI_Get_library_version", C.volt_library_version((*C.char)(unsafe.Pointer(&buf[0])), &n)); err != nil {
		return "", err
	}
	return string(buf[:int(n)]), nil
}

// boolInt converts b to a C int 0 or 1.
func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
