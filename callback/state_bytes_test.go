package callback_test

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// TestCallbackStateBytes pins the JSON of EarlyStopping's and
// ModelCheckpoint's checkpointed state (scores as numbers, "+Inf" and "-Inf"
// as strings): a state written by volt 0.1.0, whose scores were all quoted,
// loads and is written in today's spelling, which loads and is written again
// byte for byte.
func TestCallbackStateBytes(t *testing.T) {
	for _, c := range []struct{ old, now string }{
		{`{"wait_count":0,"stopped_epoch":0,"best_score":"+Inf"}`, `{"wait_count":0,"stopped_epoch":0,"best_score":"+Inf"}`},
		{`{"wait_count":2,"stopped_epoch":5,"best_score":"1e-05"}`, `{"wait_count":2,"stopped_epoch":5,"best_score":0.00001}`},
		{`{"wait_count":1,"stopped_epoch":0,"best_score":"-Inf"}`, `{"wait_count":1,"stopped_epoch":0,"best_score":"-Inf"}`},
		{`{"wait_count":3,"stopped_epoch":7,"best_score":"1.234567e+06"}`, `{"wait_count":3,"stopped_epoch":7,"best_score":1234567}`},
	} {
		for _, in := range []string{c.old, c.now} {
			es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_loss"})
			if err := es.LoadState([]byte(in)); err != nil {
				t.Fatalf("EarlyStopping.LoadState(%s): %v", in, err)
			}
			if got, err := es.State(); err != nil || string(got) != c.now {
				t.Errorf("EarlyStopping state loaded from %s is written as %s (%v), want %s", in, got, err, c.now)
			}
		}
	}
	// The state of a ModelCheckpoint not yet set up by a Fit (its directory
	// still ""), as LoadState restores everything only for the same directory.
	const dir = "ckpts"
	const empty = `{"monitor":"val_loss","dirpath":"","best_model_path":"","best_model_score":null,"best_k_models":[],"kth_best_model_path":"","kth_value":null,"last_model_path":"","last_global_step_saved":0}`
	kept := func(best, a, b string) string {
		return `{"monitor":"val_loss","dirpath":"","best_model_path":"` + dir + `/a.ckpt","best_model_score":` + best + `,"best_k_models":[{"path":"` + dir + `/a.ckpt","score":` + a + `},{"path":"` + dir + `/b.ckpt","score":` + b + `}],"kth_best_model_path":"` + dir + `/b.ckpt","kth_value":` + b + `,"last_model_path":"` + dir + `/last.ckpt","last_global_step_saved":8}`
	}
	for _, c := range []struct{ old, now string }{
		{empty, empty},
		{kept(`"1e-05"`, `"1e-05"`, `"+Inf"`), kept(`0.00001`, `0.00001`, `"+Inf"`)},
	} {
		for _, in := range []string{c.old, c.now} {
			mc := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Monitor: "val_loss", SaveTopK: volt.Ptr(2)})
			if err := mc.LoadState([]byte(in)); err != nil {
				t.Fatalf("ModelCheckpoint.LoadState(%s): %v", in, err)
			}
			if got, err := mc.State(); err != nil || string(got) != c.now {
				t.Errorf("ModelCheckpoint state loaded from\n %s\nis written as\n %s (%v), want\n %s", in, got, err, c.now)
			}
		}
	}
}
