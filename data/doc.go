// Package data provides datasets, collation and data loaders that turn
// examples into batches of host tensors for the volt trainer.
//
// Start with a [DataLoader] over a [Dataset] (a [Slice] of [Example] values
// is the simplest); [CombinedLoader] iterates several loaders together.
package data
