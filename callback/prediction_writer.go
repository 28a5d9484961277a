package callback

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/jsonfloat"
)

// PredictionWriter writes the outputs of Trainer.Predict to JSON files
// (Lightning's BasePredictionWriter, with a file format chosen for it).
//
// With WriteInterval "batch" each batch's prediction goes to
// Dir/batch_<dataloader>_<batch>.json as a Prediction as soon as it is
// computed; with "epoch" all of them go to Dir/predictions.json as an
// EpochPredictions at the end of the run; "both" writes both. Files are
// written to a temporary name and renamed, so a reader never sees half a file.
type PredictionWriter struct {
	configured[PredictionWriterConfig]
	epoch EpochPredictions
}

// PredictionWriterConfig configures PredictionWriter.
type PredictionWriterConfig struct {
	// Dir receives the files; "" means "predictions". It is created when needed.
	Dir string
	// WriteInterval is "batch" (default), "epoch" or "both".
	WriteInterval string
}

// Prediction is one batch's prediction as written to a file.
type Prediction struct {
	DataloaderIdx int    `json:"dataloader_idx"`
	BatchIdx      int    `json:"batch_idx"`
	Shape         []int  `json:"shape"`
	DType         string `json:"dtype"`
	// Values are the elements in row-major order; NaN and ±Inf are written
	// as the strings "NaN", "+Inf" and "-Inf".
	Values []float64 `json:"values"`
}

// predictionJSON is Prediction as encoded, with non-finite values as the
// strings of jsonfloat.Float (volt's checkpoints spell them so too).
type predictionJSON struct {
	DataloaderIdx int               `json:"dataloader_idx"`
	BatchIdx      int               `json:"batch_idx"`
	Shape         []int             `json:"shape"`
	DType         string            `json:"dtype"`
	Values        []jsonfloat.Float `json:"values"`
}

// MarshalJSON implements json.Marshaler.
func (p Prediction) MarshalJSON() ([]byte, error) {
	vals := make([]jsonfloat.Float, len(p.Values))
	for i, v := range p.Values {
		vals[i] = jsonfloat.Float(v)
	}
	return json.Marshal(predictionJSON{p.DataloaderIdx, p.BatchIdx, p.Shape, p.DType, vals})
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Prediction) UnmarshalJSON(b []byte) error {
	var j predictionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = Prediction{DataloaderIdx: j.DataloaderIdx, BatchIdx: j.BatchIdx, Shape: j.Shape, DType: j.DType, Values: make([]float64, len(j.Values))}
	for i, v := range j.Values {
		p.Values[i] = float64(v)
	}
	return nil
}

// EpochPredictions is the epoch file: the predictions of each loader, in
// batch order.
type EpochPredictions struct {
	Dataloaders [][]Prediction `json:"dataloaders"`
}

// NewPredictionWriter returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewPredictionWriter(cfg PredictionWriterConfig) *PredictionWriter {
	return newCallback(cfg, newPredictionWriter)
}

// Config returns the configuration in effect: NewPredictionWriter's, with the defaults
// its zero values stand for filled in (print-config shows it).
func (w *PredictionWriter) Config() PredictionWriterConfig { return w.cfg }

// newPredictionWriter builds the callback for cfg, filling in the defaults
// its zero values stand for, or reports its bad fields.
func newPredictionWriter(cfg *PredictionWriterConfig) (*PredictionWriter, error) {
	switch cfg.WriteInterval {
	case "":
		cfg.WriteInterval = "batch"
	case "batch", "epoch", "both":
	default:
		return nil, fmt.Errorf("callback.NewPredictionWriter: PredictionWriterConfig.WriteInterval: unknown %q; valid: \"batch\", \"epoch\", \"both\"", cfg.WriteInterval)
	}
	if cfg.Dir == "" {
		cfg.Dir = "predictions"
	}
	return &PredictionWriter{}, nil
}

// BatchFile returns the path of a batch's file.
func (w *PredictionWriter) BatchFile(dataloaderIdx, batchIdx int) string {
	return filepath.Join(w.cfg.Dir, fmt.Sprintf("batch_%d_%d.json", dataloaderIdx, batchIdx))
}

// EpochFile returns the path of the epoch file.
func (w *PredictionWriter) EpochFile() string { return filepath.Join(w.cfg.Dir, "predictions.json") }

// OnPredictStart creates Dir and forgets the previous run's predictions.
func (w *PredictionWriter) OnPredictStart(t *volt.Trainer) error {
	w.epoch = EpochPredictions{Dataloaders: make([][]Prediction, len(t.NumEvalBatches()))}
	return os.MkdirAll(w.cfg.Dir, 0o755)
}

// OnPredictBatchEnd writes the batch's file and/or keeps it for the epoch file.
func (w *PredictionWriter) OnPredictBatchEnd(t *volt.Trainer, out *volt.StepOutput, _ *data.Batch, batchIdx, dl int) error {
	p, err := newPrediction(out.Prediction, dl, batchIdx)
	if err != nil {
		return err
	}
	if w.cfg.WriteInterval != "batch" {
		w.epoch.Dataloaders[dl] = append(w.epoch.Dataloaders[dl], p)
	}
	if w.cfg.WriteInterval == "epoch" {
		return nil
	}
	return writeJSON(w.BatchFile(dl, batchIdx), p)
}

// OnPredictEpochEnd writes the epoch file.
func (w *PredictionWriter) OnPredictEpochEnd(t *volt.Trainer) error {
	if w.cfg.WriteInterval == "batch" {
		return nil
	}
	err := writeJSON(w.EpochFile(), w.epoch)
	w.epoch = EpochPredictions{}
	return err
}

// newPrediction copies a tensor's values to the host as float64s.
func newPrediction(t *tensors.Tensor, dl, batchIdx int) (Prediction, error) {
	if t == nil {
		return Prediction{}, fmt.Errorf("no prediction for batch %d of loader %d", batchIdx, dl)
	}
	p := Prediction{DataloaderIdx: dl, BatchIdx: batchIdx, Shape: slices.Clone(t.Shape().Dimensions), DType: t.DType().String()}
	if p.Shape == nil {
		p.Shape = []int{}
	}
	var convErr error
	err := t.ConstFlatData(func(flat any) {
		v := reflect.ValueOf(flat)
		p.Values = make([]float64, v.Len())
		for i := range p.Values {
			switch e := v.Index(i); e.Kind() {
			case reflect.Float32, reflect.Float64:
				p.Values[i] = e.Float()
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				p.Values[i] = float64(e.Int())
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				p.Values[i] = float64(e.Uint())
			case reflect.Bool:
				if e.Bool() {
					p.Values[i] = 1
				}
			default:
				convErr = fmt.Errorf("prediction of dtype %s cannot be written as numbers", t.DType())
				return
			}
		}
	})
	if err == nil {
		err = convErr
	}
	return p, err
}

// writeJSON writes v to path through a temporary file and a rename.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Interface guards.
var (
	_ volt.OnPredictStart    = (*PredictionWriter)(nil)
	_ volt.OnPredictBatchEnd = (*PredictionWriter)(nil)
	_ volt.OnPredictEpochEnd = (*PredictionWriter)(nil)
)
