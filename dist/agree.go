package dist

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"
)

// AnyTrue returns true on every rank when flag is true on at least one rank
// (a stop requested on any rank stops them all at the same point).
func AnyTrue(g Group, flag bool) (bool, error) {
	v := []int64{0}
	if flag {
		v[0] = 1
	}
	if err := g.AllReduceInt64(v, Max); err != nil {
		return false, fmt.Errorf("dist.AnyTrue: %w", err)
	}
	return v[0] != 0, nil
}

// BroadcastBytes returns root's data on every rank; the other ranks' data
// is ignored and may have any length (root sends the length first).
func BroadcastBytes(g Group, data []byte, root int) ([]byte, error) {
	size := binary.LittleEndian.AppendUint64(nil, uint64(len(data)))
	if err := g.Broadcast(size, root); err != nil {
		return nil, fmt.Errorf("dist.BroadcastBytes: length: %w", err)
	}
	n := binary.LittleEndian.Uint64(size)
	buf := data
	if g.Rank() != root {
		buf = make([]byte, n)
	}
	if err := g.Broadcast(buf, root); err != nil {
		return nil, fmt.Errorf("dist.BroadcastBytes: %w", err)
	}
	return buf, nil
}

// AbortOnPanic, deferred at the top of a rank's main goroutine, turns a
// panic into g.Abort with the panic value and its stack, so the other ranks
// end at once instead of waiting in their next collective:
//
//	defer dist.AbortOnPanic(g)
func AbortOnPanic(g Group) {
	if r := recover(); r != nil {
		g.Abort(fmt.Errorf("panic: %v\n%s", r, debug.Stack()))
	}
}
