// Package tuner finds a learning rate and a batch size before training, as
// Lightning's Tuner does. Start with [LRFind] and [ScaleBatchSize].
//
// LRFind sweeps the learning rate over a number of optimization steps (Lightning
// 2.2.5's algorithm: exponential or linear sweep, loss smoothed with beta 0.98,
// stop when the smoothed loss exceeds a multiple of the best) and suggests the
// rate at the steepest descent of the loss; the curve can be written as CSV
// and as an HTML page (report.LRCurveSVG). LRFinder runs it as a callback when
// a Fit starts. ScaleBatchSize finds the largest batch size within a memory
// budget and a step-time budget (Lightning's power and binsearch searches) and
// sets it on the data module (BatchSizer).
//
// Sweeps and trials run on second trainers made from the caller's
// Trainer.Config, starting from the caller's weights and optimizer state when
// it has any, so the caller's trainer is never touched: its weights,
// optimizer state and progress are the same afterwards, bit for bit. Where
// Lightning continues the caller's global step (its loss smoothing counts from
// it), a sweep from a trained trainer here counts from 0; from a fresh one
// the two are the same.
package tuner
