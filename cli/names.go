package cli

import (
	"reflect"

	"github.com/voltml/volt/internal/fieldkey"
)

// snakeCase turns a Go field name into a config key (fieldkey.SnakeCase:
// the rule volt.LoadModule also uses).
func snakeCase(name string) string { return fieldkey.SnakeCase(name) }

// fieldKey returns the config key of a struct field and its help text
// (fieldkey.Of): the name from a `volt:"name"` tag, else the field name in
// snake case; skip is true for unexported fields and `volt:"-"`. explicit
// says the tag named it.
func fieldKey(f reflect.StructField) (key, help string, skip, explicit bool) {
	return fieldkey.Of(f)
}
