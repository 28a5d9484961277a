package volt

import (
	"fmt"

	"github.com/voltml/volt/data"
)

// shardLoaders gives each rank its shard of the training loader (padded or
// cut by Config.ShardUneven so every rank has the same number of batches,
// as the per-step all-reduce needs) and of the evaluation loaders (neither
// padded nor cut: each sample is evaluated once, so synced epoch values
// equal one process's). A stream (a DataLoader over an IterableDataset)
// becomes a data.StreamShard: for training its ranks agree before each
// batch, so that every rank stops at the batch the shortest part ends
// (data.StreamShard says which samples that leaves out); for evaluation
// each rank reads all of its part. In a single process it returns the
// loaders as they are.
func (t *Trainer) shardLoaders(train data.Loader, eval []data.Loader) (data.Loader, []data.Loader) {
	if !t.ddp.on {
		return train, eval
	}
	if train != nil {
		train = t.shardLoader(train, t.cfg.ShardUneven, "training")
	}
	if eval != nil {
		sharded := make([]data.Loader, len(eval))
		for i, l := range eval {
			sharded[i] = t.shardLoader(l, data.KeepUneven, "evaluation")
		}
		eval = sharded
	}
	return train, eval
}

// shardLoader wraps a DataLoader over a map-style dataset in data.Sharded
// for this rank, with the trainer's seed when the loader has none (every
// rank then shuffles alike, reshuffled per epoch from seed + epoch), and a
// DataLoader over a stream in data.StreamShard. Other loaders are read
// whole by every rank, which volt says once.
func (t *Trainer) shardLoader(l data.Loader, uneven data.Uneven, what string) data.Loader {
	switch dl := l.(type) {
	case *data.Sharded:
		return l // the module shards itself
	case *data.StreamShard:
		if what == "training" && dl.Agree == nil {
			own := *dl
			own.Agree = t.agreeStreamBatch
			return &own
		}
		return l
	case *data.DataLoader:
		if dl.Iterable != nil {
			s := &data.StreamShard{Loader: dl, Rank: t.ddp.group.Rank(), Replicas: t.ddp.group.Size()}
			if what == "training" {
				s.Agree = t.agreeStreamBatch
			}
			return s
		}
		if dl.Dataset == nil {
			break
		}
		own := *dl
		if own.Seed == nil {
			seed := t.cfg.seed
			own.Seed = &seed
		}
		// A training loader's Sampler is dealt as Lightning's
		// DistributedSamplerWrapper(shuffle=True) deals it.
		return &data.Sharded{Loader: &own, Rank: t.ddp.group.Rank(), Replicas: t.ddp.group.Size(), Uneven: uneven,
			PermuteSampler: what == "training"}
	}
	t.sayOnce("unsharded-"+what, fmt.Sprintf("volt: the %s loader (%T) is not a map-style data.DataLoader, so volt cannot shard it: "+
		"each of the %d ranks reads all of it (shard it by Trainer.GlobalRank() yourself, or use data.Sharded)", what, l, t.ddp.group.Size()))
	return l
}
