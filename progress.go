package volt

import "encoding/json"

// ProgressVersion is the format version of Progress, for checkpoints.
const ProgressVersion = 1

// Counter says how far a repeated event got: each field is incremented in
// order (Ready first, Completed last), so after an interruption the fields
// show exactly which phase of the event was reached.
type Counter struct {
	Ready     int64 `json:"ready"`
	Started   int64 `json:"started"`
	Processed int64 `json:"processed"`
	Completed int64 `json:"completed"`
}

// Tracker counts an event over the whole run (Total) and within the current
// enclosing loop (Current, reset when that loop restarts).
type Tracker struct {
	Total   Counter `json:"total"`
	Current Counter `json:"current"`
}

func (t *Tracker) ready()        { t.Total.Ready++; t.Current.Ready++ }
func (t *Tracker) started()      { t.Total.Started++; t.Current.Started++ }
func (t *Tracker) processed()    { t.Total.Processed++; t.Current.Processed++ }
func (t *Tracker) completed()    { t.Total.Completed++; t.Current.Completed++ }
func (t *Tracker) resetCurrent() { t.Current = Counter{} }

// Progress holds every counter the loops keep, in one serializable struct.
type Progress struct {
	Version int `json:"version"`
	// Epoch counts training epochs.
	Epoch Tracker `json:"epoch"`
	// TrainBatch counts training batches; Current is reset every epoch.
	TrainBatch Tracker `json:"train_batch"`
	// OptimizerSteps counts optimization steps: the global step.
	OptimizerSteps int64 `json:"optimizer_steps"`
	// BatchesStepped counts the training batches after which the
	// optimizers stepped (in manual optimization every batch), Lightning's
	// _batches_that_stepped: the loggers' step and what LogEveryNSteps
	// counts. It equals OptimizerSteps unless a batch takes several
	// optimizer steps (manual optimization, TBPTT).
	BatchesStepped int64 `json:"batches_stepped"`
	// ValBatch, TestBatch and PredictBatch count evaluation batches; Current
	// is reset at each run of the loop.
	ValBatch     Tracker `json:"val_batch"`
	TestBatch    Tracker `json:"test_batch"`
	PredictBatch Tracker `json:"predict_batch"`
	// ValRuns counts validation runs inside Fit (not the sanity check).
	ValRuns int64 `json:"val_runs"`
	// At is the hook boundary the loops last crossed (saved as "stage",
	// e.g. "train_batch_end").
	At LoopPoint `json:"stage"`
}

// UnmarshalJSON implements json.Unmarshaler. A checkpoint written before
// BatchesStepped was saved counts one per optimizer step, which it was in
// every run but those taking several optimizer steps per batch.
func (p *Progress) UnmarshalJSON(b []byte) error {
	type plain Progress
	raw := struct {
		*plain
		BatchesStepped *int64 `json:"batches_stepped"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	p.BatchesStepped = p.OptimizerSteps
	if raw.BatchesStepped != nil {
		p.BatchesStepped = *raw.BatchesStepped
	}
	return nil
}
