// Package tuner finds a learning rate and a batch size before training, as
// Lightning's Tuner does.
//
// LRFind sweeps the learning rate over a number of optimization steps (Lightning
// 2.2.5's algorithm: exponential or linear sweep, loss smoothed with beta 0.98,
// stop when the smoothed loss exceeds a multiple of the best) and suggests the
// rate at the steepest descent of the loss. The sweep runs on a second trainer
// made from the caller's Trainer.Config, starting from the caller's weights and
// optimizer state when it has any, so that the caller's trainer is never
// touched: its weights, optimizer state and progress are the same afterwards,
// bit for bit.
package tuner
