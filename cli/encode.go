package cli

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/voltml/volt"
	"gopkg.in/yaml.v3"
)

// encode returns the YAML node of v, in the form decode reads back to the
// same value: floats always look like floats (1.0, not 1), so that a
// volt.Fraction(1) stays a fraction.
func encode(v reflect.Value) *yaml.Node {
	switch v.Type() {
	case durationType:
		return str(time.Duration(v.Int()).String())
	case unevenType:
		return encodeUneven(v)
	case batchLimitType, valIntervalType:
		return encodeInterval(v.Interface())
	case callbacksType, loggersType:
		return encodeComponents(v)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return null()
		}
		return encode(v.Elem())
	case reflect.Struct:
		m := mapping()
		for _, f := range structFields(v.Type()) {
			m.Content = append(m.Content, str(f.key), encode(v.FieldByIndex(f.index)))
		}
		return m
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return null()
		}
		s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if isScalarKind(v.Type().Elem().Kind()) || v.Type().Elem() == durationType {
			s.Style = yaml.FlowStyle
		}
		for i := range v.Len() {
			s.Content = append(s.Content, encode(v.Index(i)))
		}
		return s
	case reflect.Map:
		if v.IsNil() {
			return null()
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, compareKeys)
		m := mapping()
		for _, k := range keys {
			m.Content = append(m.Content, encode(k), encode(v.MapIndex(k)))
		}
		return m
	case reflect.Bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v.Bool())}
	case reflect.String:
		return str(v.String())
	case reflect.Float32, reflect.Float64:
		return float(v.Float(), v.Type().Bits())
	}
	if v.CanInt() {
		return integer(v.Int())
	}
	if v.CanUint() {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatUint(v.Uint(), 10)}
	}
	panic(fmt.Sprintf("cli: encode: unsupported type %s", v.Type())) // supported() keeps these out
}

// compareKeys orders map keys: numbers by value, strings alphabetically.
func compareKeys(a, b reflect.Value) int {
	switch {
	case a.CanInt():
		return cmp.Compare(a.Int(), b.Int())
	case a.CanUint():
		return cmp.Compare(a.Uint(), b.Uint())
	case a.CanFloat():
		return cmp.Compare(a.Float(), b.Float())
	}
	return cmp.Compare(fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface()))
}

// encodeInterval writes a batch limit or validation interval in the short
// form decode reads: n, f, "10m0s", {across_epochs: n}.
func encodeInterval(v any) *yaml.Node {
	switch l := v.(type) {
	case nil:
		return null()
	case volt.Batches:
		return integer(int64(l))
	case volt.Fraction:
		return float(float64(l), 64)
	case volt.Every:
		return str(time.Duration(l).String())
	case volt.AcrossEpochs:
		m := mapping()
		m.Style = yaml.FlowStyle
		m.Content = append(m.Content, str(formAcrossEpochs), integer(int64(l)))
		return m
	}
	panic(fmt.Sprintf("cli: encode: unknown interval %T", v))
}

// mapping returns an empty block mapping node.
func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

// null returns YAML's null.
func null() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"} }

// str returns a string node; the encoder quotes it when it would read back
// as something else ("true", "1").
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// integer returns an integer node.
func integer(i int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(i, 10)}
}

// float returns a float node that reads back as a float: 1 is written 1.0,
// infinities .inf and -.inf, NaN .nan.
func float(f float64, bits int) *yaml.Node {
	var s string
	switch {
	case math.IsNaN(f):
		s = ".nan"
	case math.IsInf(f, 1):
		s = ".inf"
	case math.IsInf(f, -1):
		s = "-.inf"
	default:
		s = strconv.FormatFloat(f, 'g', -1, bits)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: s}
}
