package volt

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/voltml/volt/internal/fieldkey"
)

// HParamsOf returns the exported fields of the struct m (or of the struct
// m points to) as hyper-parameters, Lightning's save_hyperparameters(): a
// module or data module that wants all its fields recorded writes
//
//	func (m *MLP) HParams() map[string]any { return volt.HParamsOf(m) }
//
// and its checkpoints, hparams.yaml and TensorBoard's HParams record them,
// keyed as LoadModule and package cli read them back (the field name in
// snake case, LR → lr, HiddenSize → hidden_size, or a `volt:"name"` tag).
// A struct field, or a non-nil pointer to one, becomes a map of its own
// fields by the same rule, which LoadModule fills key by key; a struct that
// encodes itself (a json.Marshaler) stays a value. The exported fields of
// an embedded struct of an unexported type, which Go promotes, are recorded
// as the outer struct's own (unless it has a field of the same key).
// Unexported fields,
// fields tagged `volt:"-"`, and functions and channels (which no
// checkpoint can hold) are left out. Values are copied as they are, not
// deep-copied: slices and maps are shared with m.
//
// A module without HParams records no hyper-parameters; HParamsOf changes
// nothing for it. It panics when m is not a struct or a non-nil pointer to
// one: a program error, found on the first run.
func HParamsOf(m any) map[string]any {
	v := reflect.ValueOf(m)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("volt.HParamsOf: %T is not a struct or a non-nil pointer to one; pass the module, as in volt.HParamsOf(m)", m))
	}
	return structHParams(v)
}

// structHParams maps the recordable fields of the struct v by their keys.
func structHParams(v reflect.Value) map[string]any {
	out := map[string]any{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if promotesFields(f) {
			// Go promotes its exported fields, as encoding/json does:
			// they are the outer struct's, unless it has its own.
			for k, val := range structHParams(v.Field(i)) {
				if _, own := out[k]; !own {
					out[k] = val
				}
			}
			continue
		}
		key, _, skip, _ := fieldkey.Of(f)
		if skip {
			continue
		}
		switch fv := v.Field(i); {
		case f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Chan || f.Type.Kind() == reflect.UnsafePointer:
		case !isStructField(f.Type) || encodesItself(f.Type):
			out[key] = fv.Interface()
		case f.Type.Kind() == reflect.Struct:
			out[key] = structHParams(fv)
		case !fv.IsNil():
			out[key] = structHParams(fv.Elem())
		default:
			out[key] = fv.Interface()
		}
	}
	return out
}

// promotesFields reports whether f is an embedded struct of an unexported
// type, untagged: a field with no key of its own (unexported), whose
// exported fields Go promotes to the outer struct. (An embedded struct of
// an exported type is a field named after its type, a map of its own.)
func promotesFields(f reflect.StructField) bool {
	_, tagged := f.Tag.Lookup("volt")
	return f.Anonymous && !f.IsExported() && !tagged && f.Type.Kind() == reflect.Struct
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// encodesItself reports whether a value of type t, or a pointer to one, is
// a json.Marshaler.
func encodesItself(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler)
}
