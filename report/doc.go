// Package report turns volt's CSV logs into one self-contained HTML page:
// a run summary, one plot per metric with the train, validation and test
// series of every run on shared axes, and the hyperparameters table.
// Start with [WriteFile].
//
// Plots are inline SVG drawn here, so the page needs no scripts, fonts or
// network: open it in any browser, attach it to an issue, print it.
//
// Metric names are grouped by their base name: the stage prefix (train_,
// val_, test_ or train/, val/, test/), the _step/_epoch suffix and a
// /dataloader_idx_N suffix are stripped, so train_loss_step,
// train_loss_epoch, val_loss and test_loss share the "loss" plot.
// Step-level series are thin lines; epoch-level ones (validation, _epoch)
// are lines with markers; a single test value is a dotted reference line.
// With several runs each run has its own colour and the stages are told
// apart by line style.
//
// The volt command exposes it as "volt report DIR...".
package report
