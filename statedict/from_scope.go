package statedict

import (
	"fmt"

	"github.com/gomlx/gomlx/ml/model"
)

// FromScope returns the values of the variables under scope as a state
// dict, under their keys (Key), in the store's order: what torch's
// model.state_dict() would hold for the same layers. Every variable must
// have a value (run the model once first). Of opts, Transpose (and
// GPT2Conv1D) apply, writing those weights in the transposed layout the
// file format wants; StripPrefix and the other renames do not.
func FromScope(scope *model.Scope, opts ...Option) (*StateDict, error) {
	o := newOptions(opts)
	keys, vars := modelVariables(scope)
	sd := New()
	for _, key := range keys {
		v := vars[key]
		if !v.HasValue() {
			return nil, fmt.Errorf("statedict.FromScope: variable %s has no value yet: run the model (a step, or an Exec call) before saving", v.Path())
		}
		value, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("statedict.FromScope: %s: %w", v.Path(), err)
		}
		if value, err = value.LocalClone(); err != nil {
			return nil, fmt.Errorf("statedict.FromScope: %s: %w", v.Path(), err)
		}
		if o.transposes(key) {
			if value, err = transpose2D(key, value); err != nil {
				return nil, fmt.Errorf("statedict.FromScope: %w", err)
			}
		}
		sd.Set(key, value)
	}
	return sd, nil
}

// SaveScope writes the variables under scope to path as a safetensors
// file that torch's load_state_dict takes (FromScope, then Save).
func SaveScope(path string, scope *model.Scope, opts ...Option) error {
	sd, err := FromScope(scope, opts...)
	if err != nil {
		return err
	}
	return sd.Save(path)
}
