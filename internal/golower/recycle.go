package golower

import (
	"fmt"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// Buffers given back to the backend's pool.
//
// The Go backend keeps a pool of buffers that its ops draw their outputs
// and scratch space from, but a graph's outputs leave the pool for good: a
// finalized buffer is dropped, not pooled. A training step whose gradients
// go to the host update hands ~1.3 MB (the MNIST MLP) out of the pool each
// step, so the next step's products allocate (and zero, and on a fresh
// heap page-fault) that much again, and the matrix product's scratch
// space, which shares the pool's size classes with the gradients,
// with it. The one public way back into the pool is donation: a donated
// input that the graph does not use is put back when an execution starts.
//
// So every graph compiled on the wrapper gets, after its own parameters,
// one unused parameter per output of at least minRecycleBytes with a static
// shape (its recycle slots), which GoMLX never sees (Inputs hides them);
// Recycle keeps a buffer its owner is done with, and each execution passes
// a kept buffer of a slot's shape to that slot donated, or, when none is
// kept, a placeholder of that shape (one per shape, allocated once and
// never donated). Nothing a graph computes changes: the slots are never
// read.

// minRecycleBytes is the least output size that gets a recycle slot.
const minRecycleBytes = 4 << 10

// maxKeptPerShape bounds the buffers Recycle keeps of one shape; more are
// finalized.
const maxKeptPerShape = 8

// recycleParamPrefix names the recycle slots' parameters.
const recycleParamPrefix = "golower.recycle."

// recycleBin holds the buffers given to Recycle and the placeholders, by
// shape.
type recycleBin struct {
	mu           sync.Mutex
	kept         map[bufferKey][]compute.Buffer // inner buffers
	placeholders map[bufferKey]compute.Buffer   // inner buffers
	recycled     int64                          // buffers passed donated to an execution
}

// bufferKey identifies a buffer shape (dtype and dimensions) as a map key
// made without formatting, as Recycle does for every buffer it is given.
type bufferKey struct {
	dtype dtypes.DType
	rank  int
	dims  [maxKeyRank]int
}

// maxKeyRank is the largest rank a bufferKey holds; buffers of higher rank
// are not recycled.
const maxKeyRank = 8

// keyOf returns s's key, or false when its rank is above maxKeyRank.
func keyOf(s shapes.Shape) (bufferKey, bool) {
	k := bufferKey{dtype: s.DType, rank: len(s.Dimensions)}
	if k.rank > maxKeyRank {
		return k, false
	}
	copy(k.dims[:], s.Dimensions)
	return k, true
}

// recycleSlot is one recycle slot of a graph: its shape, and the shape's
// key, made once when the graph is built rather than at every execution.
type recycleSlot struct {
	shape shapes.Shape
	key   bufferKey
}

// Recycle gives buf, an output of a graph executed on b that its owner no
// longer uses, back to the wrapped backend's pool by way of the next
// execution with a recycle slot of its shape (see above). buf must not be
// used afterwards, as after Finalize. A buffer of another backend, one
// smaller than minRecycleBytes (no slot takes it) or one kept in excess of
// maxKeptPerShape is finalized instead; with recycling
// off (Lowering.NoRecycle) every buffer is.
func (b *Backend) Recycle(buf compute.Buffer) error {
	w, ok := buf.(*buffer)
	if !ok || w.backend != b || b.lowering.NoRecycle {
		return buf.Finalize()
	}
	s, err := w.Buffer.Shape()
	if err != nil || s.IsDynamic() || int(s.ByteSize()) < minRecycleBytes {
		return w.Buffer.Finalize()
	}
	key, ok := keyOf(s)
	if !ok {
		return w.Buffer.Finalize()
	}
	b.bin.mu.Lock()
	if len(b.bin.kept[key]) >= maxKeptPerShape {
		b.bin.mu.Unlock()
		return w.Buffer.Finalize()
	}
	if b.bin.kept == nil {
		b.bin.kept = map[bufferKey][]compute.Buffer{}
	}
	b.bin.kept[key] = append(b.bin.kept[key], w.Buffer)
	b.bin.mu.Unlock()
	return nil
}

// Recycled returns how many buffers given to Recycle went back to the
// wrapped backend's pool so far.
func (b *Backend) Recycled() int64 {
	b.bin.mu.Lock()
	defer b.bin.mu.Unlock()
	return b.bin.recycled
}

// take returns a kept buffer of slot's shape to donate (donate true) or,
// when none is kept, the placeholder of that shape (created on first use).
func (b *Backend) take(slot recycleSlot) (buf compute.Buffer, donate bool, err error) {
	s, key := slot.shape, slot.key
	b.bin.mu.Lock()
	defer b.bin.mu.Unlock()
	if kept := b.bin.kept[key]; len(kept) > 0 {
		buf = kept[len(kept)-1]
		kept[len(kept)-1] = nil
		b.bin.kept[key] = kept[:len(kept)-1]
		b.bin.recycled++
		return buf, true, nil
	}
	if p := b.bin.placeholders[key]; p != nil {
		return p, false, nil
	}
	p, _, err := b.Backend.NewSharedBuffer(0, s)
	if err != nil {
		return nil, false, fmt.Errorf("golower: placeholder of the recycle slot %s: %w", s, err)
	}
	if b.bin.placeholders == nil {
		b.bin.placeholders = map[bufferKey]compute.Buffer{}
	}
	b.bin.placeholders[key] = p
	return p, false, nil
}

// recycleSlots returns the recycle slots for outputs: those of at least
// minRecycleBytes with a static shape.
func recycleSlots(f compute.Function, outputs []compute.Value) []recycleSlot {
	var slots []recycleSlot
	for _, v := range outputs {
		s, err := f.Shape(v)
		if err != nil || !s.Ok() || s.IsDynamic() || s.DType.IsPacked() || int(s.ByteSize()) < minRecycleBytes {
			continue
		}
		if key, ok := keyOf(s); ok {
			slots = append(slots, recycleSlot{shape: s, key: key})
		}
	}
	return slots
}

// Return implements compute.Function: the main function gets its recycle
// slots (unused parameters) before the inner Return.
func (f *function) Return(outputs []compute.Value, shardings []*compute.ShardingSpec) error {
	b := f.builder.backend
	if b.lowering.NoRecycle || !b.Backend.HasSharedBuffers() || f.Function != f.builder.Builder.Main() || len(shardings) != 0 {
		return f.Function.Return(outputs, shardings)
	}
	slots := recycleSlots(f.Function, outputs)
	for i, slot := range slots {
		if _, err := f.Function.Parameter(fmt.Sprintf("%s%d", recycleParamPrefix, i), slot.shape, nil); err != nil {
			return fmt.Errorf("golower: recycle slot %d (%s): %w", i, slot.shape, err)
		}
	}
	f.builder.recycleSlots = slots
	return f.Function.Return(outputs, shardings)
}

// withRecycled returns inputs and donate with one buffer per recycle slot
// of e appended (see take).
func (e *executable) withRecycled(inputs []compute.Buffer, donate []bool) ([]compute.Buffer, []bool, error) {
	if len(e.recycleSlots) == 0 {
		return inputs, donate, nil
	}
	all := make([]bool, len(inputs), len(inputs)+len(e.recycleSlots))
	copy(all, donate)
	for _, slot := range e.recycleSlots {
		buf, d, err := e.backend.take(slot)
		if err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, buf)
		all = append(all, d)
	}
	return inputs, all, nil
}

// Inputs implements compute.Executable: the graph's own parameters, without
// the recycle slots.
func (e *executable) Inputs() (names []string, inputShapes []shapes.Shape) {
	names, inputShapes = e.Executable.Inputs()
	n := len(names) - len(e.recycleSlots)
	if n < 0 || n > len(inputShapes) {
		return names, inputShapes
	}
	return names[:n], inputShapes[:n]
}
