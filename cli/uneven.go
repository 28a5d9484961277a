package cli

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/voltml/volt/data"
	"gopkg.in/yaml.v3"
)

// unevenType is data.Uneven, which a config spells by name.
var unevenType = reflect.TypeFor[data.Uneven]()

// unevenNames are the config names of the data.Uneven policies, in value
// order.
var unevenNames = []struct {
	name  string
	value data.Uneven
}{{"pad_repeat", data.PadRepeat}, {"drop_tail", data.DropTail}, {"keep_uneven", data.KeepUneven}}

// unevenChoices returns the names for messages: "pad_repeat|drop_tail|…".
func unevenChoices() string {
	var names []string
	for _, u := range unevenNames {
		names = append(names, u.name)
	}
	return strings.Join(names, "|")
}

// uneven reads a data.Uneven policy by name.
func (d *decoder) uneven(n *yaml.Node, v reflect.Value, key string) error {
	if n != nil && n.Kind == yaml.ScalarNode && !isNull(n) {
		i := slices.IndexFunc(unevenNames, func(u struct {
			name  string
			value data.Uneven
		}) bool {
			return u.name == n.Value
		})
		if i >= 0 {
			v.SetInt(int64(unevenNames[i].value))
			return nil
		}
		return d.src.errorAt(n, key, "want one of %s, got %q", unevenChoices(), n.Value)
	}
	return d.src.errorAt(n, key, "want one of %s, got %s", unevenChoices(), describe(n))
}

// encodeUneven writes a data.Uneven policy by name (an unknown value as its
// number, which the config then refuses).
func encodeUneven(v reflect.Value) *yaml.Node {
	for _, u := range unevenNames {
		if int64(u.value) == v.Int() {
			return str(u.name)
		}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v.Int(), 10)}
}
