package cli

import (
	"reflect"
	"time"

	"github.com/voltml/volt"
)

// The types with their own YAML forms.
var (
	durationType    = reflect.TypeFor[time.Duration]()
	batchLimitType  = reflect.TypeFor[volt.BatchLimit]()
	valIntervalType = reflect.TypeFor[volt.ValInterval]()
	callbacksType   = reflect.TypeFor[callbackSpecs]()
	loggersType     = reflect.TypeFor[loggerSpecs]()
)

// supported reports whether values of type t can be read from YAML and
// written back: booleans, numbers, strings, durations, volt's batch limits
// and validation intervals, and pointers, slices, maps and structs of them.
// Functions, channels, writers and other interfaces cannot.
func supported(t reflect.Type) bool {
	switch t {
	case durationType, batchLimitType, valIntervalType, callbacksType, loggersType, unevenType:
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return supported(t.Elem())
	case reflect.Map:
		return isScalarKind(t.Key().Kind()) && supported(t.Elem())
	case reflect.Struct:
		return true // fields that are not supported are left out
	}
	return false
}

// isScalarKind reports whether k is a boolean, number or string kind.
func isScalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// structFields returns the settable fields of struct type t with their
// keys, in declaration order, embedded structs flattened. Fields of types
// that cannot be read from YAML are left out (see supported).
func structFields(t reflect.Type) []structField {
	var out []structField
	for i := range t.NumField() {
		f := t.Field(i)
		key, help, skip, explicit := fieldKey(f)
		if skip {
			continue
		}
		if f.Anonymous && !explicit && f.Type.Kind() == reflect.Struct {
			for _, inner := range structFields(f.Type) {
				inner.index = append([]int{i}, inner.index...)
				out = append(out, inner)
			}
			continue
		}
		if !supported(f.Type) {
			continue
		}
		out = append(out, structField{key: key, help: help, index: []int{i}, typ: f.Type, goName: f.Name})
	}
	return out
}

// structField is one settable field of a struct.
type structField struct {
	key    string
	help   string
	index  []int
	typ    reflect.Type
	goName string
}

// isGroup reports whether a field of type t becomes a section of keys
// (a plain struct) rather than one value.
func isGroup(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t != durationType
}
