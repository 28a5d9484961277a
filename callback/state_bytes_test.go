package callback_test

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// TestCallbackStateBytes pins the JSON of EarlyStopping's and
// ModelCheckpoint's checkpointed state as it has always been (scores as
// strings, "+Inf" and "-Inf" included): a state written before loads, and is
// written again byte for byte.
func TestCallbackStateBytes(t *testing.T) {
	for _, old := range []string{
		`{"wait_count":0,"stopped_epoch":0,"best_score":"+Inf"}`,
		`{"wait_count":2,"stopped_epoch":5,"best_score":"1e-05"}`,
		`{"wait_count":1,"stopped_epoch":0,"best_score":"-Inf"}`,
		`{"wait_count":3,"stopped_epoch":7,"best_score":"1.234567e+06"}`,
	} {
		es, err := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_loss"})
		if err != nil {
			t.Fatal(err)
		}
		if err := es.LoadState([]byte(old)); err != nil {
			t.Fatalf("EarlyStopping.LoadState(%s): %v", old, err)
		}
		if got, err := es.State(); err != nil || string(got) != old {
			t.Errorf("EarlyStopping state loaded from %s is written as %s (%v)", old, got, err)
		}
	}
	// The state of a ModelCheckpoint not yet set up by a Fit (its directory
	// still ""), as LoadState restores everything only for the same directory.
	const dir = "ckpts"
	for _, old := range []string{
		`{"monitor":"val_loss","dirpath":"","best_model_path":"","best_model_score":null,"best_k_models":[],"kth_best_model_path":"","kth_value":null,"last_model_path":"","last_global_step_saved":0}`,
		`{"monitor":"val_loss","dirpath":"","best_model_path":"` + dir + `/a.ckpt","best_model_score":"1e-05","best_k_models":[{"path":"` + dir + `/a.ckpt","score":"1e-05"},{"path":"` + dir + `/b.ckpt","score":"+Inf"}],"kth_best_model_path":"` + dir + `/b.ckpt","kth_value":"+Inf","last_model_path":"` + dir + `/last.ckpt","last_global_step_saved":8}`,
	} {
		mc, err := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Monitor: "val_loss", SaveTopK: volt.Ptr(2)})
		if err != nil {
			t.Fatal(err)
		}
		if err := mc.LoadState([]byte(old)); err != nil {
			t.Fatalf("ModelCheckpoint.LoadState(%s): %v", old, err)
		}
		if got, err := mc.State(); err != nil || string(got) != old {
			t.Errorf("ModelCheckpoint state loaded from\n %s\nis written as\n %s (%v)", old, got, err)
		}
	}
}
