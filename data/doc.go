// Package data provides datasets, collation and data loaders that turn
// examples into batches of host tensors for the volt trainer.
package data
