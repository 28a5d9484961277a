package volt

import "github.com/voltml/volt/data"

// SeedEverything sets the process-wide default seed: the seed of trainers
// created afterwards without Config.Seed (their variable initialisation and
// their DataLoaders without a Seed), and of DataLoaders run outside a
// trainer. A trainer reads it once, in NewTrainer; changing it later does not
// change existing trainers, and resuming from a checkpoint does not change it.
func SeedEverything(seed uint64) { data.SetDefaultSeed(seed) }
