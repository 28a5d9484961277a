package volt

import "github.com/voltml/volt/data"

// SeedEverything sets the seed that trainers use for variable initialisation
// and that data loaders without their own seed use for shuffling, so that
// the same seed gives bitwise-identical weights and data order.
func SeedEverything(seed uint64) { data.SetDefaultSeed(seed) }
