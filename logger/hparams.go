package logger

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"

	"gopkg.in/yaml.v3"
)

// mergeHparams returns a new map holding base overlaid with deep copies of
// params' top-level entries (a shallow merge, like Python's dict.update in
// Lightning). It fails, naming the key, when a value cannot be written as
// YAML; base is never modified.
func mergeHparams(base, params map[string]any) (map[string]any, error) {
	merged := maps.Clone(base)
	if merged == nil {
		merged = make(map[string]any, len(params))
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := deepCopy(params[k])
		if _, err := marshalYAML(v); err != nil {
			return nil, fmt.Errorf("logger: hyperparameter %q cannot be written as YAML (use maps, slices, strings, numbers, bools): %w", k, err)
		}
		merged[k] = v
	}
	return merged, nil
}

// deepCopy copies the nested maps and slices of a hyperparameter value so
// later changes by the caller do not alter what is written.
func deepCopy(v any) any { return mapLeaves(v, func(leaf any) any { return leaf }) }

// mapLeaves returns a copy of v whose maps and slices, at any depth, are
// new and whose other values are leaf's of them.
func mapLeaves(v any, leaf func(any) any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = mapLeaves(e, leaf)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = mapLeaves(e, leaf)
		}
		return out
	}
	return leaf(v)
}

// marshalYAML encodes v with two-space indentation. yaml.v3 panics on
// unsupported types (funcs, channels, complex numbers); the panic is
// returned as an error.
func marshalYAML(v any) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeHparams atomically writes params as YAML to path.
func writeHparams(path string, params map[string]any) error {
	data, err := marshalYAML(params)
	if err != nil {
		return fmt.Errorf("logger: encode %s: %w", path, err)
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
