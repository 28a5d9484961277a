package volt

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/checkpoint"
)

// weightedModule is a module with a field (an identity of its own).
type weightedModule struct{ Width int }

func (*weightedModule) TrainingStep(*Step, Batch) *graph.Node { return nil }

// saveTinyCheckpoint writes a checkpoint with one module variable.
func saveTinyCheckpoint(t *testing.T) string {
	t.Helper()
	ct, err := checkpoint.FromGoMLX("/dense/weights", tensors.FromValue([]float32{1, 2}))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.ckpt")
	if err := checkpoint.Save(path, &checkpoint.File{VoltVersion: Version, Tensors: []checkpoint.Tensor{ct}, State: []byte(`{"hparams":{"width":3}}`)}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadedWeightsFollowTheModule: the weights go to the loaded module
// only, and are forgotten once it is collected.
func TestLoadedWeightsFollowTheModule(t *testing.T) {
	addr := loadAndCheck(t, saveTinyCheckpoint(t))
	// The module is unreachable once loadAndCheck returns.
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		loadedWeights.Lock()
		_, held := loadedWeights.byAddr[addr]
		loadedWeights.Unlock()
		if !held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the weights are still held 5 s after their module became unreachable")
		}
		time.Sleep(time.Millisecond)
	}
}

// loadAndCheck loads path into a module that does not outlive the call and
// checks that only that module has the weights; it returns the module's
// address.
//
//go:noinline
func loadAndCheck(t *testing.T, path string) uintptr {
	m, err := LoadModule(path, &weightedModule{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Width != 3 || weightsOf(m) == nil || weightsOf(&weightedModule{Width: 3}) != nil {
		t.Fatalf("width %d, weights on the loaded module %v, on another %v", m.Width, weightsOf(m) != nil, weightsOf(&weightedModule{Width: 3}) != nil)
	}
	return uintptr(unsafe.Pointer(m))
}
