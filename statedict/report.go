package statedict

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gomlx/compute/shapes"
)

// Report says what Load or Apply did: the model keys loaded, and under
// NonStrict what was skipped.
type Report struct {
	// Scope is the model's scope; File the state dict's file.
	Scope, File string
	// Loaded are the model's keys given the file's values.
	Loaded []string
	// Missing are the model's keys the file lacks (NonStrict only: they
	// keep their initial values).
	Missing []string
	// Unexpected are the file's keys the model lacks, after the renames
	// (NonStrict only: skipped).
	Unexpected []string
	// Excluded are the file's keys Exclude left out.
	Excluded []string
	// Converted are the keys whose values were converted to the model's
	// dtype (ConvertDTypes).
	Converted []string
}

// String is one line per non-empty list.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "loaded %d tensors from %s into scope %q", len(r.Loaded), r.File, r.Scope)
	list(&b, "missing keys, in the model and not in the file, kept their initial values", r.Missing)
	list(&b, "unexpected keys, in the file and not in the model, skipped", r.Unexpected)
	list(&b, "excluded from the file", r.Excluded)
	list(&b, "converted to the model's dtype", r.Converted)
	return b.String()
}

// Mismatch is a tensor whose shape or dtype differs from its variable's.
type Mismatch struct {
	// Key is the model's key; FileKey the file's, before renaming.
	Key, FileKey string
	// File and Model are the two shapes, with their dtypes.
	File, Model shapes.Shape
}

// LoadError is a state dict that does not fit the model: Load and Apply
// return (or panic with) it, listing every problem at once.
type LoadError struct {
	// Scope is the model's scope; File the state dict's file.
	Scope, File string
	// Strict is whether missing and unexpected keys were errors; Renamed
	// whether the file's keys were renamed (StripPrefix, AddPrefix,
	// Rename) before matching.
	Strict, Renamed bool
	// Missing are the model's keys the file lacks; Unexpected the file's
	// keys the model lacks (both empty under NonStrict).
	Missing, Unexpected []string
	// Mismatched are the tensors whose shapes or dtypes differ.
	Mismatched []Mismatch
}

// Error lists the problems as load_state_dict does, with a hint where the
// keys differ by a prefix.
func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "statedict: %s does not fit the model under scope %q", e.File, e.Scope)
	list(&b, "missing keys, in the model and not in the file", e.Missing)
	if e.Renamed {
		list(&b, "unexpected keys, in the file (renamed) and not in the model", e.Unexpected)
	} else {
		list(&b, "unexpected keys, in the file and not in the model", e.Unexpected)
	}
	for _, m := range e.Mismatched {
		key := fmt.Sprintf("%q", m.Key)
		if m.FileKey != m.Key {
			key += fmt.Sprintf(" (the file's %q)", m.FileKey)
		}
		fmt.Fprintf(&b, "\n  size or dtype mismatch for %s: the file has %s, the model %s", key, shapeString(m.File), shapeString(m.Model))
	}
	if len(e.Mismatched) > 0 {
		layer := e.Mismatched[0].FileKey[:strings.LastIndex(e.Mismatched[0].FileKey, ".")+1]
		fmt.Fprintf(&b, "\n  (a layer whose size differs on purpose, a new classifier, loads with statedict.Exclude(%q) and statedict.NonStrict(), keeping its initial values)", layer)
	}
	if hint := prefixHint(e.Missing, e.Unexpected); hint != "" {
		b.WriteString("\n  " + hint)
	}
	if e.Strict && len(e.Mismatched) == 0 {
		b.WriteString("\n  (statedict.NonStrict() loads the keys that match and reports the rest)")
	}
	return b.String()
}

// list writes "\n  what (n): k1, k2, …" when keys is not empty.
func list(b *strings.Builder, what string, keys []string) {
	if len(keys) == 0 {
		return
	}
	const most = 20
	shown := keys
	if len(shown) > most {
		shown = shown[:most]
	}
	fmt.Fprintf(b, "\n  %s (%d): %s", what, len(keys), strings.Join(shown, ", "))
	if len(keys) > most {
		fmt.Fprintf(b, ", … and %d more", len(keys)-most)
	}
}

// prefixHint suggests StripPrefix or AddPrefix when the file's keys are
// the model's with a prefix more, or less.
func prefixHint(missing, unexpected []string) string {
	if len(missing) == 0 || len(unexpected) == 0 {
		return ""
	}
	inMissing := map[string]bool{}
	for _, k := range missing {
		inMissing[k] = true
	}
	first, _, _ := strings.Cut(unexpected[0], ".")
	if p := first + "."; inMissing[strings.TrimPrefix(unexpected[0], p)] {
		return fmt.Sprintf("the file's keys start with %q where the model's do not: load with statedict.StripPrefix(%q)", p, p)
	}
	first, _, _ = strings.Cut(missing[0], ".")
	inUnexpected := map[string]bool{}
	for _, k := range unexpected {
		inUnexpected[k] = true
	}
	if p := first + "."; inUnexpected[strings.TrimPrefix(missing[0], p)] {
		return fmt.Sprintf("the model's keys start with %q where the file's do not: load with statedict.AddPrefix(%q)", p, p)
	}
	return ""
}

// shapeString is a shape as "float32[2, 4]" ("int64[]" for a scalar).
func shapeString(s shapes.Shape) string {
	dims := make([]string, len(s.Dimensions))
	for i, d := range s.Dimensions {
		dims[i] = strconv.Itoa(d)
	}
	return strings.ToLower(s.DType.String()) + "[" + strings.Join(dims, ", ") + "]"
}
