package volt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/voltml/volt/dist"
)

// agreeNonFinite makes TerminateOnNaN a decision of the whole job: after
// every training step each rank says whether its checks found a
// non-finite value, and when any did, every rank returns the same
// *NonFiniteError, that of the rank whose finding is the likeliest cause
// (a loss before a gradient before a parameter, then the lowest rank),
// its Where naming that rank. The ranks stop at the same batch instead of
// one rank aborting the job. A rank-local loss or gradient is the cause a
// parameter check on the others merely follows: the all-reduced gradients
// carry one rank's NaN into every rank's weights. It costs one all-reduce
// of one integer per training batch (per split with TBPTT), only with
// TerminateOnNaN on several ranks. err is the step's
// error; any other error is returned as it is (that rank then aborts the
// job).
func (t *Trainer) agreeNonFinite(err error) error {
	if !t.ddp.on || !t.cfg.TerminateOnNaN {
		return err
	}
	var nf *NonFiniteError
	if err != nil && !errors.As(err, &nf) {
		return err
	}
	g := t.ddp.group
	size := int64(g.Size())
	key := []int64{3 * size} // none
	if nf != nil {
		key[0] = nonFiniteKind(nf)*size + int64(g.Rank())
	}
	if err := g.AllReduceInt64(key, dist.Min); err != nil {
		return fmt.Errorf("volt: agreeing on TerminateOnNaN across ranks: %w", err)
	}
	t.ddp.reducer.stats.NonFiniteAgreements++
	if key[0] == 3*size {
		return nil
	}
	root := int(key[0] % size)
	var own []byte
	if g.Rank() == root {
		own = encodeNonFinite(nf)
	}
	own, err = dist.BroadcastBytes(g, own, root)
	if err != nil {
		return fmt.Errorf("volt: sharing rank %d's non-finite value: %w", root, err)
	}
	agreed := decodeNonFinite(own)
	agreed.Where += fmt.Sprintf(" on rank %d of %d", root, size)
	t.ddp.agreedNonFinite = true
	return agreed
}

// nonFiniteKind orders the findings by how likely each is the cause.
func nonFiniteKind(nf *NonFiniteError) int64 {
	switch {
	case nf.What == "loss":
		return 0
	case strings.HasPrefix(nf.What, "gradient"):
		return 1
	}
	return 2
}

// encodeNonFinite writes e as its value's bits, What, a zero byte, Where.
func encodeNonFinite(e *NonFiniteError) []byte {
	out := binary.LittleEndian.AppendUint64(nil, math.Float64bits(e.Value))
	out = append(out, e.What...)
	out = append(out, 0)
	return append(out, e.Where...)
}

// decodeNonFinite reads what encodeNonFinite wrote.
func decodeNonFinite(b []byte) *NonFiniteError {
	what, where, _ := strings.Cut(string(b[8:]), "\x00")
	return &NonFiniteError{What: what, Value: math.Float64frombits(binary.LittleEndian.Uint64(b)), Where: where}
}
