package engine

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/voltml/volt/internal/golower"
)

// TestWithExecutorsPerCore: one executor per core, at most the Go
// backend's eight, added beside the other options unless the
// configuration sets its own.
func TestWithExecutorsPerCore(t *testing.T) {
	for _, tc := range []struct {
		config string
		cores  int
		want   string
	}{
		{"go", 1, "go:num_executors=1"},
		{"go", 2, "go:num_executors=2"},
		{"go", 8, "go:num_executors=8"},
		{"go", 64, "go:num_executors=8"},
		{"go", 0, "go:num_executors=1"},
		{"go:parallelism=1", 2, "go:parallelism=1,num_executors=2"},
		{"go:num_executors=3", 2, "go:num_executors=3"},
		{"go:parallelism=4,num_executors=5", 2, "go:parallelism=4,num_executors=5"},
	} {
		if got := withExecutorsPerCore(tc.config, tc.cores); got != tc.want {
			t.Errorf("withExecutorsPerCore(%q, %d) = %q, want %q", tc.config, tc.cores, got, tc.want)
		}
	}
}

// TestOpsByGraphRunsOneExecutorPerCore: the Go backend that Backend
// creates for go:ops_by_graph runs side-by-side graphs on one executor
// goroutine per core, and one that names num_executors keeps it. The
// backend's NumExecutors field is read by reflection, as golower reads
// its count of executions in flight.
func TestOpsByGraphRunsOneExecutorPerCore(t *testing.T) {
	// A worker limit only this test uses, one per GOMAXPROCS (go test -cpu
	// runs it at several in one process), so that the backend, which
	// Backend creates once per configuration, is created here.
	cores := runtime.GOMAXPROCS(0)
	limit := fmt.Sprintf("parallelism=%d", 1000+cores)
	for _, tc := range []struct {
		config string
		want   int
	}{
		{"go:ops_by_graph," + limit, min(cores, maxGoExecutors)},
		{"go:ops_by_graph," + limit + ",num_executors=5", 5},
	} {
		b, err := Backend(tc.config)
		if err != nil {
			t.Fatal(err)
		}
		wrapped, ok := b.(*golower.Backend)
		if !ok {
			t.Fatalf("%s: backend %T, want the golower wrapper", tc.config, b)
		}
		field := reflect.ValueOf(wrapped.Backend).Elem().FieldByName("NumExecutors")
		if !field.IsValid() {
			t.Fatalf("%s: the Go backend (%T) has no NumExecutors field", tc.config, wrapped.Backend)
		}
		if got := int(field.Int()); got != tc.want {
			t.Errorf("%s: %d executors, want %d", tc.config, got, tc.want)
		}
	}
}
