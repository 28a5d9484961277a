package volt

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/engine"
)

// Module buffers under data parallelism.
//
// A module's non-trainable variables that its training graph updates
// (batch normalization's running mean and variance, and its
// num_batches_tracked) are PyTorch's buffers. Each rank updates them from
// its own batches, so left alone they drift apart, and a checkpoint or a
// validation would depend on the rank. PyTorch's DistributedDataParallel,
// which Lightning's "ddp" strategy wraps with its defaults, broadcasts rank
// 0's buffers to every rank before each forward pass (broadcast_buffers=True;
// not within no_sync's accumulation windows): in effect the job keeps the
// buffers rank 0 computed from its own batches. volt does the same after
// every training batch, so the buffers are also equal between batches
// (where PyTorch lets the other ranks' copies differ until the next
// forward): a rank's buffers are bitwise rank 0's, and rank 0's are those
// of one process that trained on rank 0's batches.

// bufferSync remembers, per buffer, the value it had after the last
// broadcast, to find those a training step changed.
type bufferSync struct {
	seen map[*model.Variable]*tensors.Tensor
}

// isBuffer reports whether v is one of the module's non-trainable
// variables: not volt's own ("/volt/…": optimizer state, accumulators, all
// equal on every rank by construction) and not GoMLX's random-number state
// (per rank, as PyTorch's is).
func isBuffer(v *model.Variable) bool {
	return !v.Trainable && v.HasValue() && engine.ModuleVariable(v.Path())
}

// broadcastBuffers gives every rank rank 0's value of each buffer the last
// training batch changed. The ranks run the same graph, so they change the
// same buffers; rank 0 sends a hash of its list with the values, and a rank
// whose list differs fails (instead of misreading the bytes).
func (t *Trainer) broadcastBuffers() error {
	if !t.ddp.on || t.eng == nil {
		return nil
	}
	if t.ddp.buffers.seen == nil {
		t.ddp.buffers.seen = map[*model.Variable]*tensors.Tensor{}
	}
	var changed []*model.Variable
	buffers := 0
	for _, v := range valuedVariables(t.eng.Store) {
		if !isBuffer(v) {
			continue
		}
		buffers++
		value, err := v.Value()
		if err != nil {
			return fmt.Errorf("buffer %s: %w", v.Path(), err)
		}
		if t.ddp.buffers.seen[v] != value {
			changed = append(changed, v)
		}
	}
	if buffers == 0 {
		// A module without buffers costs no collective. The ranks agree:
		// broadcastVariables checked at the start that they hold the same
		// variables.
		return nil
	}
	h := fnv.New64a()
	for _, v := range changed {
		fmt.Fprintf(h, "%s %s\n", v.Path(), v.Shape())
	}
	var payload bytes.Buffer
	payload.Write(h.Sum(nil))
	for _, v := range changed {
		value, _ := v.Value()
		if err := value.ConstBytes(func(b []byte) { payload.Write(b) }); err != nil {
			return fmt.Errorf("buffer %s: %w", v.Path(), err)
		}
	}
	if len(changed) == 0 {
		// Still take part: another rank may have changed buffers (and will fail below).
		payload.Truncate(8)
	}
	root, err := dist.BroadcastBytes(t.ddp.group, payload.Bytes(), 0)
	if err != nil {
		return fmt.Errorf("broadcasting rank 0's buffers: %w", err)
	}
	differ, err := dist.AnyTrue(t.ddp.group, !bytes.Equal(root[:min(8, len(root))], payload.Bytes()[:8]))
	if err != nil {
		return err
	}
	if differ {
		return fmt.Errorf("the ranks' training steps changed different non-trainable variables (rank %d: %s); every rank must build the same module",
			t.ddp.group.Rank(), variablePaths(changed))
	}
	data := root[8:]
	for _, v := range changed {
		value, _ := v.Value()
		n := int(value.Shape().ByteSize())
		theirs := data[:n]
		data = data[n:]
		if t.ddp.group.Rank() != 0 {
			fresh := tensors.FromShape(value.Shape())
			if err := fresh.MutableBytes(func(b []byte) { copy(b, theirs) }); err != nil {
				return err
			}
			if err := v.SetValue(fresh); err != nil {
				return fmt.Errorf("setting buffer %s to rank 0's value: %w", v.Path(), err)
			}
			value = fresh
		}
		t.ddp.buffers.seen[v] = value
	}
	return nil
}

func variablePaths(vars []*model.Variable) string {
	paths := make([]string, len(vars))
	for i, v := range vars {
		paths[i] = v.Path()
	}
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}
