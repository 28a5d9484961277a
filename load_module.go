package volt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/voltml/volt/internal/engine"
	"reflect"
	"strings"

	"github.com/voltml/volt/checkpoint"
)

// LoadModule reads the checkpoint at path (Lightning's load_from_checkpoint)
// into m and returns m: the module's hyper-parameter fields are set from the
// ones the checkpoint recorded, and the checkpoint's weights become m's
// weights. Both full and weights-only checkpoints load.
//
// Hyper-parameters are what the saving module's HParams returned. Each key
// sets the exported field it names, by the rule package cli uses: the field
// name in snake case (HiddenSize ↔ hidden_size, LR ↔ lr) or a `volt:"name"`
// tag; a map value fills a struct field key by key. Fields the checkpoint
// does not name keep the values m had. A key that names no field, or a value
// that does not fit its field's type, is an error naming both; a module with
// a Validate() error method is checked afterwards.
//
// Weights live in a trainer's variable store, not in the module: LoadModule
// attaches them to m, and every trainer that runs m for the first time (a
// new Trainer, or one that last ran another module) starts from them:
// Predict, Validate and Test use them as they are, and Fit trains from them
// with a fresh optimizer, step counter and schedule (a warm start, where
// FromCheckpoint would resume the saved run). The first step traced checks
// that the module's variables and the checkpoint's are the same, naming the
// missing and unexpected ones (NonStrict loads a partial match). A run with
// FromCheckpoint loads that file instead. What a Fit trains stays in its
// trainer (Trainer.SaveCheckpoint, or the same trainer's next run); another
// trainer running m starts again from the file. Calling LoadModule again on
// m replaces the attached weights. A module wrapping m (ModuleWrapper, as
// the tuner's sweeps do) runs with them too. A module type without fields has no
// identity in Go (every pointer to it may be the same): its weights go to
// every module of that type.
func LoadModule[T any, PT interface {
	*T
	Module
}](path string, m PT) (PT, error) {
	if m == nil {
		return nil, fmt.Errorf("volt.LoadModule %s: the module is nil; pass a pointer such as &MyModel{}", path)
	}
	w, err := readModule(path, m)
	if err != nil {
		return nil, fmt.Errorf("volt.LoadModule: %w", err)
	}
	attachWeights(m, w)
	return m, nil
}

// readModule sets m's hyper-parameters from the checkpoint at path (m is a
// non-nil pointer) and returns the checkpoint's module weights, without
// attaching them: LoadModule's work, for callers that hold m as a Module.
func readModule(path string, m Module) (*moduleWeights, error) {
	f, err := checkpoint.Load(path)
	if err != nil {
		return nil, err
	}
	if err := badVoltVersion(path, f.VoltVersion); err != nil {
		return nil, err
	}
	st, err := decodeModuleState(f.State)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: decoding the trainer state: %w", path, err)
	}
	mv := reflect.ValueOf(m)
	if err := setHParams(mv.Elem(), st.HParams, mv.Type().Elem().String()); err != nil {
		return nil, fmt.Errorf("checkpoint %s: the hyper-parameters do not fit %T:\n%w", path, m, err)
	}
	if v, ok := any(m).(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %T.Validate after setting its hyper-parameters: %w", path, m, err)
		}
	}
	w := &moduleWeights{path: path, frozen: map[string]bool{}}
	for _, p := range st.Frozen {
		w.frozen[p] = true
	}
	for _, ct := range f.Tensors {
		if engine.ModuleVariable(ct.Name) {
			w.tensors = append(w.tensors, ct)
		}
	}
	if len(w.tensors) == 0 {
		return nil, fmt.Errorf("checkpoint %s holds no module weights (only volt's own state)", path)
	}
	return w, nil
}

// moduleState is the part of a checkpoint's trainer state LoadModule reads.
type moduleState struct {
	HParams map[string]any `json:"hparams"`
	Frozen  []string       `json:"frozen"`
}

// decodeModuleState reads the hyper-parameters with numbers kept as written
// (an int64 hyper-parameter survives beyond 2^53).
func decodeModuleState(state []byte) (*moduleState, error) {
	var st moduleState
	if len(state) == 0 {
		return &st, nil
	}
	d := json.NewDecoder(bytes.NewReader(state))
	d.UseNumber()
	if err := d.Decode(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

// fieldsByKey maps the config keys of a struct type's fields, and their Go
// names, to the fields; keys lists the config keys.
func fieldsByKey(t reflect.Type) (byKey map[string]reflect.StructField, keys []string) {
	byKey = map[string]reflect.StructField{}
	var promoted []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if promotesFields(f) {
			promoted = append(promoted, f)
			continue
		}
		key, skip := hparamKey(f)
		if skip {
			continue
		}
		byKey[key] = f
		keys = append(keys, key)
		if _, taken := byKey[f.Name]; !taken {
			byKey[f.Name] = f // what encoding/json writes for an untagged struct
		}
	}
	// The promoted fields of embedded structs of unexported types
	// (HParamsOf), by their index path, unless the outer struct has the key.
	for _, e := range promoted {
		inner, innerKeys := fieldsByKey(e.Type)
		for _, k := range innerKeys {
			if _, own := byKey[k]; own {
				continue
			}
			f := inner[k]
			f.Index = append([]int{e.Index[0]}, f.Index...)
			byKey[k] = f
			keys = append(keys, k)
		}
	}
	return byKey, keys
}

// setHParams sets the fields of the struct dst from hp, every problem an
// error naming the key and the field.
func setHParams(dst reflect.Value, hp map[string]any, typeName string) error {
	if len(hp) == 0 {
		return nil
	}
	if dst.Kind() != reflect.Struct {
		return fmt.Errorf("the checkpoint has hyper-parameters %q but %s is a %s, not a struct with fields for them", sortedKeys(hp), typeName, dst.Kind())
	}
	byKey, valid := fieldsByKey(dst.Type())
	var errs []error
	for _, key := range sortedKeys(hp) {
		f, ok := byKey[key]
		if !ok {
			errs = append(errs, fmt.Errorf("hyper-parameter %q names no field of %s (its keys: %s); name a field with a `volt:%q` tag, or leave the key out of HParams",
				key, typeName, strings.Join(valid, ", "), key))
			continue
		}
		field := dst.FieldByIndex(f.Index)
		name := typeName + "." + f.Name
		if sub, ok := hp[key].(map[string]any); ok && isStructField(f.Type) {
			target := field
			if f.Type.Kind() == reflect.Pointer {
				if field.IsNil() {
					field.Set(reflect.New(f.Type.Elem()))
				}
				target = field.Elem()
			}
			if err := setHParams(target, sub, name); err != nil {
				errs = append(errs, fmt.Errorf("hyper-parameter %q: %w", key, err))
			}
			continue
		}
		if err := setField(field, hp[key]); err != nil {
			errs = append(errs, fmt.Errorf("hyper-parameter %q = %s does not fit field %s (%s): %w", key, jsonText(hp[key]), name, f.Type, err))
		}
	}
	return errors.Join(errs...)
}

// isStructField reports whether a field of type t is filled key by key: a
// struct or a pointer to one, other than types that encode themselves.
func isStructField(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !t.Implements(jsonUnmarshaler) && !reflect.PointerTo(t).Implements(jsonUnmarshaler)
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// setField sets field from a JSON-decoded value, through JSON so that the
// field's type decides (numbers into ints and floats, lists into slices).
func setField(field reflect.Value, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return err
	}
	p := reflect.New(field.Type())
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(p.Interface()); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return fmt.Errorf("a JSON %s cannot be a %s", typeErr.Value, typeErr.Type)
		}
		return err
	}
	field.Set(p.Elem())
	return nil
}

// jsonText shows a hyper-parameter value as the checkpoint holds it.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
