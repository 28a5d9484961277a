package batchnorm

import (
	"strings"

	"github.com/gomlx/gomlx/ml/model"
)

// IsAffine reports whether the variable at path in store is a batch
// normalization's learned weight or bias (what torch's
// BaseFinetuning.freeze(train_bn=True) leaves trainable): weight or bias
// beside a running_mean, as this package and torch name them, or scale or
// offset beside avg_weight, as GoMLX's layers/norm.BatchNorm names them.
// A normalization without running statistics (TrackRunningStats(false))
// is not recognised.
func IsAffine(store *model.Store, path string) bool {
	i := strings.LastIndex(path, "/")
	if i < 0 {
		return false
	}
	dir, name := path[:i], path[i+1:]
	switch name {
	case "weight", "bias":
		return store.GetVariable(dir+"/running_mean") != nil
	case "scale", "offset":
		return store.GetVariable(dir+"/avg_weight") != nil
	}
	return false
}
