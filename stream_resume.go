package volt

import (
	"context"
	"fmt"

	"github.com/voltml/volt/data"
	"github.com/voltml/volt/dist"
)

// Resuming a stream: a data.DataLoader (or data.StreamShard) over a
// data.StatefulIterable puts the stream's position after each batch in
// Batch.StreamState. The trainer notes the positions of the batches it
// trains (streamNotes.note), saves the one after the last trained batch in
// the checkpoint's resume point (each rank's: ranks 1…N-1 send theirs with
// their metric accumulators), and a Fit resumed mid-epoch hands it back to
// the loader (streamContext, data.WithStreamState), which continues the
// stream there instead of replaying the epoch's first batches.

// streamNotes are the stream positions the trainer knows: after the last
// two trained batches of the epoch in progress, and the restored
// checkpoint's.
type streamNotes struct {
	last, prev streamNote
	restored   streamNote
}

// streamNote is a stream's position after batches batches of epoch (state
// nil: none known).
type streamNote struct {
	epoch, batches int
	state          []byte
}

// note records the position after training batch batchIdx of epoch, b's
// StreamState.
func (s *streamNotes) note(epoch, batchIdx int, b *data.Batch) {
	s.prev = s.last
	s.last = streamNote{epoch: epoch, batches: batchIdx + 1, state: b.StreamState}
}

// stateAt returns the training stream's position after batches batches of
// epoch, or nil when none is known.
func (s *streamNotes) stateAt(epoch, batches int) []byte {
	for _, n := range []streamNote{s.last, s.prev, s.restored} {
		if n.state != nil && n.epoch == epoch && n.batches == batches {
			return n.state
		}
	}
	return nil
}

// restore keeps the stream position of a restored resume point (nil when
// the Fit does not resume inside an epoch), forgetting the others.
func (s *streamNotes) restore(r *resumePoint) {
	*s = streamNotes{}
	if r != nil && r.inEpoch() {
		s.restored = streamNote{epoch: r.Epoch, batches: r.Batch, state: r.StreamState}
	}
}

// streamContext returns the context of the training loader's Batches(epoch,
// skip): with the restored stream position when the Fit resumes there.
// Resuming a stream without one (a dataset that is not a
// data.StatefulIterable, or a checkpoint without its position) replays the
// batches before skip, which volt says once.
func (t *Trainer) streamContext(ctx context.Context, train data.Loader, epoch, skip int) context.Context {
	if skip == 0 {
		return ctx
	}
	if state := t.ckpt.fit.stream.stateAt(epoch, skip); state != nil {
		return data.WithStreamState(ctx, epoch, skip, state)
	}
	var stream data.IterableDataset
	switch l := train.(type) {
	case *data.DataLoader:
		stream = l.Iterable
	case *data.StreamShard:
		if l.Loader != nil {
			stream = l.Loader.Iterable
		}
	}
	if stream == nil {
		return ctx
	}
	why := "the checkpoint holds no position for it"
	if _, ok := stream.(data.StatefulIterable); !ok {
		why = fmt.Sprintf("%T is not a data.StatefulIterable", stream)
	}
	t.sayOnce("stream-replay", fmt.Sprintf("volt: resuming epoch %d at batch %d of a stream: %s, so the loader reads and discards the %d batches before it "+
		"(give the dataset State and LoadState to resume at once)", epoch, skip, why, skip))
	return ctx
}

// agreeStreamBatch is a training StreamShard's Agree: whether every rank
// has its next batch (an all-reduce of the flag with min).
func (t *Trainer) agreeStreamBatch(have bool) (bool, error) {
	v := []int64{0}
	if have {
		v[0] = 1
	}
	if err := t.ddp.group.AllReduceInt64(v, dist.Min); err != nil {
		return false, err
	}
	return v[0] == 1, nil
}
