package cli

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"gopkg.in/yaml.v3"
)

// decoder reads YAML nodes from one source into Go values, every problem an
// *Error naming the key and where the value came from.
type decoder struct {
	src source
	reg *registry
}

// decode sets v (addressable) from n; key names v in messages.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, key string) error {
	n = resolveAlias(n)
	switch v.Type() {
	case durationType:
		return d.duration(n, v, key)
	case unevenType:
		return d.uneven(n, v, key)
	case batchLimitType:
		return d.batchLimit(n, v, key)
	case valIntervalType:
		return d.valInterval(n, v, key)
	case callbacksType:
		return d.components(n, v, key, d.reg.callbacks, "callback")
	case loggersType:
		return d.components(n, v, key, d.reg.loggers, "logger")
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := d.decode(n, p.Elem(), key); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Struct:
		return d.structValue(n, v, key)
	case reflect.Slice:
		return d.slice(n, v, key)
	case reflect.Map:
		return d.mapValue(n, v, key)
	}
	return d.scalar(n, v, key)
}

// resolveAlias follows a YAML alias (*name) to its anchor.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is YAML's null (null, ~ or nothing).
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe says what n holds, for "got …" in messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "null"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	}
	return fmt.Sprintf("%q", n.Value)
}

// scalar sets a boolean, number or string.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, key string) error {
	want := map[reflect.Kind]string{reflect.Bool: "true or false", reflect.String: "a string",
		reflect.Float32: "a number", reflect.Float64: "a number"}[v.Kind()]
	switch {
	case want != "":
	case v.CanInt():
		want = "an integer"
	case v.CanUint():
		want = "an integer >= 0"
	default:
		return d.src.errorAt(n, key, "type %s cannot be set from a config", v.Type())
	}
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		return d.src.errorAt(n, key, "want %s, got %s", want, describe(n))
	}
	tag := n.ShortTag()
	bad := func() error { return d.src.errorAt(n, key, "want %s, got %s", want, describe(n)) }
	switch {
	case v.Kind() == reflect.String:
		v.SetString(n.Value)
	case v.Kind() == reflect.Bool:
		var b bool
		if tag != "!!bool" || n.Decode(&b) != nil {
			return bad()
		}
		v.SetBool(b)
	case v.CanInt():
		var i int64
		if tag != "!!int" || n.Decode(&i) != nil {
			return bad()
		}
		if v.OverflowInt(i) {
			return d.src.errorAt(n, key, "%d does not fit in %s", i, v.Type())
		}
		v.SetInt(i)
	case v.CanUint():
		var u uint64
		if tag != "!!int" || n.Decode(&u) != nil {
			return bad()
		}
		if v.OverflowUint(u) {
			return d.src.errorAt(n, key, "%d does not fit in %s", u, v.Type())
		}
		v.SetUint(u)
	default: // floats
		var f float64
		if (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
			return bad()
		}
		if v.OverflowFloat(f) {
			return d.src.errorAt(n, key, "%v does not fit in %s", f, v.Type())
		}
		v.SetFloat(f)
	}
	return nil
}

// duration reads "90s", "1h30m" (time.ParseDuration) or Lightning's
// "DD:HH:MM:SS".
func (d *decoder) duration(n *yaml.Node, v reflect.Value, key string) error {
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		return d.src.errorAt(n, key, "want a duration such as \"90s\", \"1h30m\" or \"00:12:00:00\", got %s", describe(n))
	}
	dur, err := parseDuration(n.Value)
	if err != nil {
		return d.src.errorAt(n, key, "want a duration such as \"90s\", \"1h30m\" or \"00:12:00:00\", got %q", n.Value)
	}
	v.SetInt(int64(dur))
	return nil
}

// parseDuration reads a Go duration or "DD:HH:MM:SS".
func parseDuration(s string) (time.Duration, error) {
	if strings.Count(s, ":") == 3 {
		return callback.ParseDuration(s)
	}
	return time.ParseDuration(s)
}

// The explicit forms of batch limits and validation intervals.
const (
	formBatches      = "batches"
	formFraction     = "fraction"
	formAcrossEpochs = "across_epochs"
	formEvery        = "every"
)

// batchLimit reads an integer (volt.Batches), a float (volt.Fraction), null
// (every batch) or {batches: n} / {fraction: f}.
func (d *decoder) batchLimit(n *yaml.Node, v reflect.Value, key string) error {
	const want = "want an integer (a number of batches), a float (a fraction of the epoch), {batches: n}, {fraction: f} or null (all)"
	l, err := d.interval(n, key, want, formBatches, formFraction)
	if err != nil {
		return err
	}
	if l == nil {
		v.SetZero()
	} else {
		v.Set(reflect.ValueOf(l.(volt.BatchLimit)))
	}
	return nil
}

// valInterval reads what batchLimit reads, a duration string (volt.Every),
// {across_epochs: n} or {every: duration}.
func (d *decoder) valInterval(n *yaml.Node, v reflect.Value, key string) error {
	const want = "want an integer (batches), a float (a fraction of the epoch), a duration such as \"10m\", " +
		"{across_epochs: n}, or null (after each epoch)"
	l, err := d.interval(n, key, want, formBatches, formFraction, formAcrossEpochs, formEvery)
	if err != nil {
		return err
	}
	if l == nil {
		v.SetZero()
	} else {
		v.Set(reflect.ValueOf(l.(volt.ValInterval)))
	}
	return nil
}

// interval reads one of the forms allowed (a subset of batches, fraction,
// across_epochs, every); nil for null.
func (d *decoder) interval(n *yaml.Node, key, want string, forms ...string) (any, error) {
	form, value := "", n
	switch {
	case isNull(n):
		return nil, nil
	case n.Kind == yaml.MappingNode && len(n.Content) == 2:
		form, value = n.Content[0].Value, resolveAlias(n.Content[1])
		if !contains(forms, form) {
			e := d.src.errorAt(n.Content[0], key, "unknown form %q; %s", form, want)
			e.Suggestion = nearest(form, forms)
			return nil, e
		}
	case n.Kind == yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int":
			form = formBatches
		case "!!float":
			form = formFraction
		case "!!str":
			form = formEvery
		}
	}
	if form == "" || !contains(forms, form) || value.Kind != yaml.ScalarNode {
		return nil, d.src.errorAt(n, key, "%s; got %s", want, describe(n))
	}
	var out any
	var err error
	switch form {
	case formBatches, formAcrossEpochs:
		var i int
		err = d.scalar(value, reflect.ValueOf(&i).Elem(), key+"."+form)
		out = volt.Batches(i)
		if form == formAcrossEpochs {
			out = volt.AcrossEpochs(i)
		}
	case formFraction:
		var f float64
		err = d.scalar(value, reflect.ValueOf(&f).Elem(), key+"."+form)
		out = volt.Fraction(f)
	case formEvery:
		var dur time.Duration
		err = d.duration(value, reflect.ValueOf(&dur).Elem(), key)
		out = volt.Every(dur)
	}
	return out, err
}

// contains reports whether s is in list.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// structValue sets the fields of v from a mapping, naming unknown keys
// with the nearest valid one.
func (d *decoder) structValue(n *yaml.Node, v reflect.Value, key string) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return d.src.errorAt(n, key, "want a mapping of keys, got %s", describe(n))
	}
	fields := structFields(v.Type())
	var errs []error
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		sub := joinKey(key, k.Value)
		if first, dup := seen[k.Value]; dup {
			errs = append(errs, d.src.errorAt(k, sub, "set twice (first at %s)", d.src.at(first)))
			continue
		}
		seen[k.Value] = k
		f, ok := findField(fields, k.Value)
		if !ok {
			errs = append(errs, d.unknownKey(k, sub, key, fields))
			continue
		}
		if err := d.decode(val, v.FieldByIndex(f.index), sub); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unknownKey is the error for key k inside section parent.
func (d *decoder) unknownKey(k *yaml.Node, key, parent string, fields []structField) error {
	e := d.src.errorAt(k, key, "unknown key")
	var valid []string
	for _, f := range fields {
		valid = append(valid, joinKey(parent, f.key))
	}
	if len(valid) == 0 {
		e.Problem = "unknown key (this section has no settable keys)"
	}
	e.Suggestion = nearest(key, valid)
	return e
}

// findField returns the field with the given key.
func findField(fields []structField, key string) (structField, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return structField{}, false
}

// joinKey joins a section and a key with a dot.
func joinKey(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// slice sets v from a list (null empties it).
func (d *decoder) slice(n *yaml.Node, v reflect.Value, key string) error {
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return d.src.errorAt(n, key, "want a list, got %s", describe(n))
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	var errs []error
	for i, item := range n.Content {
		if err := d.decode(item, out.Index(i), fmt.Sprintf("%s[%d]", key, i)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	v.Set(out)
	return nil
}

// mapValue sets v from a mapping (null empties it).
func (d *decoder) mapValue(n *yaml.Node, v reflect.Value, key string) error {
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return d.src.errorAt(n, key, "want a mapping, got %s", describe(n))
	}
	out := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := reflect.New(v.Type().Key()).Elem()
		sub := fmt.Sprintf("%s[%s]", key, n.Content[i].Value)
		if err := d.scalar(n.Content[i], k, sub); err != nil {
			errs = append(errs, err)
			continue
		}
		val := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(n.Content[i+1], val, sub); err != nil {
			errs = append(errs, err)
			continue
		}
		out.SetMapIndex(k, val)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	v.Set(out)
	return nil
}
