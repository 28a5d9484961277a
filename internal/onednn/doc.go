// Package onednn runs float32 2-D convolutions (forward, gradient with
// respect to the input, gradient with respect to the kernel) on oneDNN
// 2.6 (Debian's libdnnl.so.2), loaded at run time with purego: no cgo,
// and a build without the library still works; Available says whether it
// can be used (VOLT_ONEDNN=off turns it off).
//
// A Conv describes the shapes, parameters and, per tensor, the element
// strides of its logical axes, so that the caller's slices (NCHW, NHWC,
// GoMLX's HWIO kernels, rows with gaps) are read and written in place.
// Forward, BackwardData and BackwardWeights create the oneDNN primitive
// of a Conv once (a cache keyed by the whole Conv: shapes, strides,
// parameters, thread count, format) and run it with a scratchpad of
// their own, so that calls from several goroutines may run at once.
//
// Threads: libdnnl.so.2 runs on libgomp's OpenMP; its thread count is
// set per OS thread with omp_set_num_threads (oneDNN 2.6 has no
// dnnl_set_max_threads for the OpenMP runtime), so every creation and
// execution runs on a locked OS thread with Conv.Threads set.
//
// Bits: a repeated call with the same Conv gives the same bits. At 1 and
// 2 threads, Forward and BackwardData gave the same bits on ResNet-like
// shapes, BackwardWeights did not (oneDNN splits its reduction over the
// batch by thread); Conv.BatchChunk makes BackwardWeights
// independent of Threads. See BenchmarkResNetConvsVsGolower for the
// comparison with volt's golower path.
package onednn
