package batchnorm

import "github.com/gomlx/gomlx/ml/model"

// frozenStatsParam is the store parameter FreezeRunningStats sets.
const frozenStatsParam = "volt_batchnorm_frozen_running_stats"

// FreezeRunningStats makes the batch normalizations of store whose scope
// path frozen reports keep their running statistics as they are while
// training: they normalise with the batch's statistics, as before, but no
// longer update running_mean, running_var or num_batches_tracked
// (PyTorch's track_running_stats=False set on a module that has them, as
// Lightning's BaseFinetuning.freeze(train_bn=False) does); evaluation uses
// the running statistics as always. It takes effect in the training
// programs traced after the call; nil undoes it.
func FreezeRunningStats(store *model.Store, frozen func(scope string) bool) {
	store.RootScope().SetParam(frozenStatsParam, frozen)
}

// RunningStatsFrozen reports whether FreezeRunningStats froze the running
// statistics of the batch normalization at scope.
func RunningStatsFrozen(scope *model.Scope) bool {
	frozen := model.GetParamOr[func(string) bool](scope, frozenStatsParam, nil)
	return frozen != nil && frozen(scope.Scope())
}
