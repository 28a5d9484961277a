package volt

import (
	"encoding/binary"
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
)

// Prediction under data-parallel training: each rank predicts its shard
// of a map-style DataLoader (data.Sharded, neither padded nor cut, so no
// sample is predicted twice), and gatherPredictions all-gathers the ranks'
// rows into the batches one process would have returned. Every rank gets
// the whole result, not only rank 0: code after Predict usually runs on
// every rank (a metric, a file written by rank 0 alone), and it then reads
// the same values everywhere, for one exchange of the predictions.

// shardPredictLoaders gives each rank its shard of each prediction loader
// it can shard; sharded[i] is the DataLoader loader i came from, nil for a
// loader every rank reads whole.
func (t *Trainer) shardPredictLoaders(loaders []data.Loader) (out []data.Loader, sharded []*data.DataLoader) {
	if !t.ddp.on {
		return loaders, make([]*data.DataLoader, len(loaders))
	}
	_, out = t.shardLoaders(nil, loaders)
	sharded = make([]*data.DataLoader, len(loaders))
	for i, l := range out {
		if s, ok := l.(*data.Sharded); ok && l != loaders[i] {
			sharded[i] = s.Loader
		}
		if _, ok := l.(*data.StreamShard); ok && l != loaders[i] {
			// A stream's predictions are not gathered: every rank predicts
			// all of it.
			out[i] = loaders[i]
		}
	}
	return out, sharded
}

// gatherPredictions returns the predictions of loader dl of every rank in
// the order of one process: the ranks' shards interleave (rank r's j-th
// sample is position r + j·N of the loader's order), re-batched by
// loader's BatchSize. Each prediction must have the batch as its first
// axis.
func (t *Trainer) gatherPredictions(dl int, loader *data.DataLoader, preds []*tensors.Tensor) ([]*tensors.Tensor, error) {
	g := t.ddp.group
	var own []byte
	header := []int64{0, -1} // rows, dtype; then the row's dimensions
	for i, p := range preds {
		s := p.Shape()
		if s.Rank() < 1 {
			return nil, fmt.Errorf("volt: Predict on %d ranks gathers predictions by sample, but loader %d's PredictStep returned a scalar for batch %d; return one row per sample", g.Size(), dl, i)
		}
		if header[1] < 0 {
			header[1] = int64(s.DType)
			for _, d := range s.Dimensions[1:] {
				header = append(header, int64(d))
			}
		}
		header[0] += int64(s.Dimensions[0])
		if err := p.ConstBytes(func(b []byte) { own = append(own, b...) }); err != nil {
			return nil, err
		}
	}
	lengths, err := g.AllGatherInt64([]int64{int64(len(own)), int64(len(header))})
	if err != nil {
		return nil, fmt.Errorf("volt: gathering predictions: %w", err)
	}
	size := g.Size()
	rows := make([]int64, size)
	parts := make([][]byte, size)
	var dtype dtypes.DType
	var dims []int
	for r := range size {
		hdr := make([]byte, 8*lengths[2*r+1])
		if r == g.Rank() {
			for i, v := range header {
				binary.LittleEndian.PutUint64(hdr[8*i:], uint64(v))
			}
		}
		if err := g.Broadcast(hdr, r); err != nil {
			return nil, fmt.Errorf("volt: gathering predictions: %w", err)
		}
		parts[r] = own
		if r != g.Rank() {
			parts[r] = make([]byte, lengths[2*r])
		}
		if err := g.Broadcast(parts[r], r); err != nil {
			return nil, fmt.Errorf("volt: gathering predictions: %w", err)
		}
		rows[r] = int64(binary.LittleEndian.Uint64(hdr))
		if kind := int64(binary.LittleEndian.Uint64(hdr[8:])); kind >= 0 && dims == nil {
			dtype = dtypes.DType(kind)
			dims = []int{}
			for i := 2; i < len(hdr)/8; i++ {
				dims = append(dims, int(binary.LittleEndian.Uint64(hdr[8*i:])))
			}
		}
	}
	total := 0
	for _, n := range rows {
		total += int(n)
	}
	if total == 0 {
		return nil, nil
	}
	rowBytes := int(shapes.Make(dtype, dims...).ByteSize())
	for r, n := range rows {
		if int(n)*rowBytes != len(parts[r]) {
			return nil, fmt.Errorf("volt: Predict on %d ranks: rank %d's predictions of loader %d do not all have the shape [rows %v] of %s", size, r, dl, dims, dtype)
		}
	}
	batch := max(loader.BatchSize, 1)
	var out []*tensors.Tensor
	for start := 0; start < total; start += batch {
		n := min(batch, total-start)
		tensor := tensors.FromShape(shapes.Make(dtype, append([]int{n}, dims...)...))
		err := tensor.MutableBytes(func(b []byte) {
			for i := range n {
				pos := start + i
				r, j := pos%size, pos/size
				copy(b[i*rowBytes:(i+1)*rowBytes], parts[r][j*rowBytes:(j+1)*rowBytes])
			}
		})
		if err != nil {
			return nil, err
		}
		out = append(out, tensor)
	}
	return out, nil
}
