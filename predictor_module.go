package volt

import (
	"fmt"
	"reflect"
)

// LoadPredictorModule is LoadPredictor for a module held as a Module, as
// code generic over the module's type holds it (package cli's serve); m
// must be a non-nil pointer. The checkpoint's hyper-parameters set m's
// fields, and the predictor runs m's PredictStep with the checkpoint's
// weights; m itself keeps no weights attached (LoadModule attaches them).
func LoadPredictorModule(path string, m Module, opts ...PredictorOption) (*Predictor, error) {
	if mv := reflect.ValueOf(m); m == nil || mv.Kind() != reflect.Pointer || mv.IsNil() {
		return nil, fmt.Errorf("volt.LoadPredictorModule %s: the module is %T; pass a non-nil pointer such as &MyModel{}", path, m)
	}
	o, err := predictorOpts(path, m, opts)
	if err != nil {
		return nil, err
	}
	w, err := readModule(path, m)
	if err != nil {
		return nil, fmt.Errorf("volt.LoadPredictor: %w", err)
	}
	return startPredictor(path, m, w, o)
}
