package tuner

import "strings"

// allocationMarkers are the texts by which a backend says it could not
// allocate device memory: XLA's PJRT ("RESOURCE_EXHAUSTED: Out of memory
// while trying to allocate …"), CUDA's, and those Lightning's is_oom_error
// recognises.
var allocationMarkers = []string{
	"RESOURCE_EXHAUSTED",
	"out of memory",
	"Out of memory",
	"CUDA_ERROR_OUT_OF_MEMORY",
	"CUBLAS_STATUS_ALLOC_FAILED",
	"can't allocate memory",
}

// allocationFailure reports whether err says that memory could not be
// allocated, and the reason a trial then records: a batch size that does
// not fit on a GPU fails its trial, as in Lightning's batch-size finder,
// rather than the search.
func allocationFailure(err error) (string, bool) {
	msg := err.Error()
	for _, m := range allocationMarkers {
		if i := strings.Index(msg, m); i >= 0 {
			line, _, _ := strings.Cut(msg[i:], "\n")
			return "allocation failed: " + line, true
		}
	}
	return "", false
}
