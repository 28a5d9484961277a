"""Writes goldens.json: the index sequences of torch's samplers (Debian's
python3-torch 1.13), epoch after epoch from one seeded generator, and of
Lightning 2.2.5's DistributedSamplerWrapper over them on 2 ranks; and the
batches a DataLoader over a seeded RandomSampler gives a loop that reads at
most B batches of each epoch and no further, as Lightning's fit loop reads
its training loader (torch draws a RandomSampler's permutations lazily, so
what an epoch reads decides the next epoch's order).

Run from the repository root (Lightning from the project's archive):
    mkdir -p /tmp/pl && tar -xJf testdata/lightning/lightning-2.2.5-site.tar.xz -C /tmp/pl
    PYTHONPATH=/tmp/pl/lsite /usr/bin/python3 data/testdata/samplers/gen_sampler_goldens.py
"""
import json
import os

import torch
from torch.utils.data import RandomSampler, SubsetRandomSampler, WeightedRandomSampler

EPOCHS = 3
WEIGHTS = [0.1, 2.0, 0.0, 1.5, 3.0, 0.25, 1.0, 0.7, 0.0, 5.0, 0.05, 1.25]


def epochs(make, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    s = make(g)
    return [list(map(int, s)) for _ in range(EPOCHS)]


cases = []


def case(name, kind, seed, make, **params):
    cases.append(dict(name=name, kind=kind, seed=seed, params=params, epochs=epochs(make, seed)))


for n, seed in [(1, 3), (7, 0), (100, 42), (1000, 2**32 + 5)]:
    case(f"random n={n}", "random", seed, lambda g, n=n: RandomSampler(range(n), generator=g), n=n)
for n, k, seed in [(10, 25, 1), (10, 3, 2), (13, 13, 9)]:
    case(f"random n={n} num_samples={k}", "random", seed,
         lambda g, n=n, k=k: RandomSampler(range(n), num_samples=k, generator=g), n=n, num_samples=k)
for n, k, seed in [(10, 5, 1), (10, 70, 7), (1000, 64, 42), (3, 1, 5)]:
    case(f"random replacement n={n} num_samples={k}", "random", seed,
         lambda g, n=n, k=k: RandomSampler(range(n), replacement=True, num_samples=k, generator=g),
         n=n, num_samples=k, replacement=True)
for k, repl, seed in [(20, True, 0), (7, True, 42), (1, True, 3), (8, False, 0), (10, False, 11), (1, False, 4)]:
    case(f"weighted num_samples={k} replacement={repl}", "weighted", seed,
         lambda g, k=k, repl=repl: WeightedRandomSampler(WEIGHTS, k, replacement=repl, generator=g),
         weights=WEIGHTS, num_samples=k, replacement=repl)
for idx, seed in [([5, 3, 9, 1, 7, 11, 2], 0), (list(range(20, 60, 3)), 42)]:
    case(f"subset of {len(idx)}", "subset", seed, lambda g, idx=idx: SubsetRandomSampler(idx, generator=g), indices=idx)

# Lightning under DDP: a custom sampler becomes DistributedSamplerWrapper(sampler, shuffle=True, seed=PL_GLOBAL_SEED).
from lightning.fabric.utilities.distributed import DistributedSamplerWrapper  # noqa: E402

ranked = []
for name, make, drop_last in [
    ("weighted num_samples=11", lambda g: WeightedRandomSampler(WEIGHTS, 11, replacement=True, generator=g), False),
    ("subset of 7", lambda g: SubsetRandomSampler([5, 3, 9, 1, 7, 11, 2], generator=g), False),
    ("subset of 7 drop_last", lambda g: SubsetRandomSampler([5, 3, 9, 1, 7, 11, 2], generator=g), True),
]:
    per_rank = []
    for rank in range(2):
        g = torch.Generator()
        g.manual_seed(5)
        w = DistributedSamplerWrapper(make(g), num_replicas=2, rank=rank, shuffle=True, seed=42, drop_last=drop_last)
        eps = []
        for e in range(EPOCHS):
            w.set_epoch(e)
            eps.append(list(map(int, w)))
        per_rank.append(eps)
    ranked.append(dict(name=name, seed=5, shard_seed=42, drop_last=drop_last, ranks=per_rank))


# torchnlp's BucketBatchSampler (pytorch-nlp 0.5.0, torchnlp/samplers/bucket_batch_sampler.py,
# not packaged by Debian), its algorithm copied: buckets of batch_size*bucket_size_multiplier
# indices of the inner sampler's order, each sorted by sort_key (SortedSampler, a stable sort),
# cut by BatchSampler and yielded through SubsetRandomSampler (torch's default generator).
from torch.utils.data import BatchSampler, SequentialSampler  # noqa: E402


def bucket_batches(order, batch_size, drop_last, sort_key, mult):
    for bucket in BatchSampler(order, min(batch_size * mult, len(order)), False):
        sorted_positions = [i for i, _ in sorted(enumerate(bucket), key=lambda r: sort_key(r[1]))]
        batches = list(BatchSampler(sorted_positions, batch_size, drop_last))
        for batch in SubsetRandomSampler(batches):
            yield [bucket[i] for i in batch]


def length(i):
    return (i * 7919) % 13


buckets = []
for n, bs, drop_last, mult, seed in [(50, 4, False, 3, 0), (50, 4, True, 3, 7), (23, 5, False, 100, 42)]:
    torch.manual_seed(seed)
    order = list(SequentialSampler(range(n)))
    eps = [list(bucket_batches(order, bs, drop_last, length, mult)) for _ in range(EPOCHS)]
    buckets.append(dict(n=n, batch_size=bs, drop_last=drop_last, bucket_batches=mult, seed=seed, epochs=eps))

# A loop that stops after `limit` batches (None: after the last one, never
# asking for another), as Lightning's fit loop reads a training DataLoader.
import itertools  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

reads = []
for n, k, repl, bs, drop_last, limit, seed in [
    (10, None, False, 3, False, None, 7), (10, None, False, 3, True, None, 7), (12, None, False, 4, False, None, 7),
    (12, None, False, 3, False, None, 1), (10, None, False, 3, False, 2, 7), (10, None, False, 3, False, 3, 7),
    (10, None, False, 3, False, 4, 7), (10, None, False, 3, False, 9, 7), (10, 25, False, 4, False, None, 3),
    (10, 25, False, 5, False, None, 3), (10, 20, False, 5, False, None, 3), (10, 20, False, 5, False, 2, 3),
    (10, 20, False, 5, True, 3, 3), (1, None, False, 1, False, None, 0), (16, None, False, 5, False, None, 42),
    (10, 70, True, 8, False, None, 5), (10, 64, True, 8, False, None, 5), (10, 70, True, 8, False, 3, 5),
    (10, 70, True, 8, True, None, 5), (10, 40, True, 8, False, 4, 5),
]:
    g = torch.Generator()
    g.manual_seed(seed)
    sampler = RandomSampler(range(n), replacement=repl, num_samples=k, generator=g)
    dl = DataLoader(range(n), batch_size=bs, sampler=sampler, drop_last=drop_last)
    eps = []
    for _ in range(EPOCHS):
        it = iter(dl) if limit is None else itertools.islice(iter(dl), limit)
        eps.append([[int(v) for v in b] for b in itertools.islice(it, len(dl))])
    reads.append(dict(n=n, num_samples=k or 0, replacement=repl, batch_size=bs, drop_last=drop_last,
                      limit=-1 if limit is None else limit, seed=seed, epochs=eps))

out = dict(torch=torch.__version__, buckets=buckets, mkl=torch.backends.mkl.is_available(), cases=cases, distributed=ranked,
           loader_reads=reads)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
