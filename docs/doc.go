// Package docs holds volt's guides (from-lightning.md: volt for PyTorch
// Lightning users) and the test that keeps them true: every godoc link in
// a guide must name an exported identifier of volt, and every Lightning
// Trainer argument and hook listed in testdata must be mapped.
package docs
