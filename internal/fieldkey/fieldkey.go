// Package fieldkey names struct fields as config keys, one rule for every
// place that maps keys to a module's fields: the command line (package cli)
// and the hyper-parameters a checkpoint restores (volt.LoadModule).
package fieldkey

import (
	"reflect"
	"strings"
	"unicode"
)

// nameOverrides spells the keys of Go names that the snake-case rule would
// split badly (an acronym followed by a plural).
var nameOverrides = map[string]string{"SWALRs": "swa_lrs", "TerminateOnNaN": "terminate_on_nan", "SyncBatchNorm": "sync_batchnorm"}

// SnakeCase turns a Go field name into a config key: MaxEpochs →
// max_epochs, CheckValEveryNEpoch → check_val_every_n_epoch,
// TruncatedBPTTSteps → truncated_bptt_steps, LR → lr, and a plural
// acronym stays one word: DeviceIDs → device_ids, URLsSeen → urls_seen.
func SnakeCase(name string) string {
	if s, ok := nameOverrides[name]; ok {
		return s
	}
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			// IDs, URLs: an acronym's plural "s" ends the word.
			plural := i+1 < len(r) && r[i+1] == 's' && (i+2 == len(r) || unicode.IsUpper(r[i+2]))
			if unicode.IsUpper(prev) && plural {
				nextLower = false
			}
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// Of returns the config key of a struct field and its help text: the name
// from a `volt:"name"` tag, else the field name in snake case; skip is true
// for unexported fields and `volt:"-"`. explicit says the tag named it.
func Of(f reflect.StructField) (key, help string, skip, explicit bool) {
	if !f.IsExported() {
		return "", "", true, false
	}
	tag, tagged := f.Tag.Lookup("volt")
	name, _, _ := strings.Cut(tag, ",")
	switch {
	case name == "-":
		return "", "", true, false
	case name != "":
		return name, f.Tag.Get("help"), false, true
	}
	return SnakeCase(f.Name), f.Tag.Get("help"), false, tagged
}
