package volt

import (
	"errors"

	"github.com/voltml/volt/dist"
)

// errPrepareElsewhere is what the ranks that did not prepare the data
// return when the rank that did failed.
var errPrepareElsewhere = errors.New("volt: PrepareData failed on the first rank of a machine (it prepares the data for its machine's ranks); its error is in its output")

// prepareData calls the PrepareData hooks as Lightning calls prepare_data
// (prepare_data_per_node): in a data-parallel job only the first rank of
// each machine (local rank 0) prepares, which may download or write files,
// and every rank waits until all have done so; a failure there fails every
// rank. In one process it is a plain call.
func (t *Trainer) prepareData() error {
	if !t.ddp.on {
		return t.emit(hookDataPreparer, hookArgs{})
	}
	var err error
	if t.LocalRank() == 0 {
		err = t.emit(hookDataPreparer, hookArgs{})
	}
	failed, agreeErr := dist.AnyTrue(t.ddp.group, err != nil)
	switch {
	case err != nil || agreeErr != nil:
		return errors.Join(err, agreeErr)
	case failed:
		return errPrepareElsewhere
	}
	return nil
}
