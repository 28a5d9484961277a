// Package docs holds volt's guides (from-lightning.md: volt for PyTorch
// Lightning users) and the test that keeps them true: every godoc link in
// a guide must name an exported identifier of volt, and every Lightning
// Trainer argument and hook listed in testdata must be mapped. It also
// checks every package's comment: each says what the package is for and,
// with a doc link, where to start.
package docs
