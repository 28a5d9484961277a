// Package cnn is examples/cnn's network for packages outside examples/,
// which cannot import examples/internal/digits, where it lives: package
// parity's TestCNNMNISTParity trains it against PyTorch. Start with [New],
// the example's configuration of [CNN].
package cnn

import "github.com/voltml/volt/examples/internal/digits"

// CNN is digits.CNN: conv 3×3 32 + ReLU + 2×2 max-pool, conv 3×3 64 +
// ReLU + 2×2 max-pool, dense 128 + ReLU, dense 10 (channels last).
type CNN = digits.CNN

// New returns the example's network: Adam 1e-3.
func New() *CNN { return &CNN{LR: 1e-3} }
