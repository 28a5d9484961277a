package volt_test

import (
	"context"
	"fmt"

	"github.com/voltml/volt"
)

// exSyncedLine logs its validation loss twice: reduced across the ranks of
// a data-parallel job (SyncDist), and as each rank sees it.
type exSyncedLine struct{ exLine }

func (m exSyncedLine) ValidationStep(s *volt.Step, b volt.Batch) {
	l := m.mse(s, b)
	s.Log("val_loss", l, volt.SyncDist)
	s.Log("val_loss_this_rank", l)
}

// SyncDist (Lightning's sync_dist=True) reduces a logged value across the
// ranks of a data-parallel job (Config.Devices) with its Reduce: here the
// epoch mean over every rank's batches, which equals one process's value
// over the whole validation set. In a single process, as here, there is
// one rank and the value is the process's own.
func ExampleLogOption_syncDist() {
	t, err := volt.NewTrainer(exQuiet(volt.Config{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := t.Validate(context.Background(), exSyncedLine{}, exData())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("world size:", t.WorldSize(), "rank:", t.GlobalRank(), "global zero:", t.IsGlobalZero())
	fmt.Printf("val_loss %.4f, val_loss_this_rank %.4f\n", res[0]["val_loss"], res[0]["val_loss_this_rank"])
	// Output:
	// world size: 1 rank: 0 global zero: true
	// val_loss 23.4257, val_loss_this_rank 23.4257
}
