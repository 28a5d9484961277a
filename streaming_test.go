package volt_test

import (
	"context"
	"iter"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// stream is a streaming loader: every batch it yields is gone from the
// source, whatever epoch or skip the caller asks for (a socket, a queue).
type stream struct {
	batches []*data.Batch
	read    int
}

func (s *stream) NumBatches() int { return -1 }

func (s *stream) Batches(ctx context.Context, _, _ int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		for s.read < len(s.batches) {
			b := s.batches[s.read]
			s.read++
			if !yield(b, nil) {
				return
			}
		}
	}
}

// TestStreamingLoaderIsReadOnce: the batch Fit pulls to trace the step
// before training is the first one trained, not read and thrown away.
func TestStreamingLoaderIsReadOnce(t *testing.T) {
	src := &stream{}
	for b, err := range (&data.DataLoader{Dataset: regression(40, 1), BatchSize: 8}).Batches(t.Context(), 0, 0) {
		if err != nil {
			t.Fatal(err)
		}
		src.batches = append(src.batches, b)
	}
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), &boring{}, volt.Loaders{Train: src})
	if tr.GlobalStep() != 5 || src.read != 5 {
		t.Errorf("trained %d steps after reading %d batches of 5, want 5 and 5", tr.GlobalStep(), src.read)
	}
}
