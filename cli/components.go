package cli

import (
	"errors"
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"
)

// components reads a list of callbacks or loggers. Each item is a name
// ("timer") or a mapping with a name and the options of that entry:
//
//   - name: early_stopping
//     monitor: val_loss
//     patience: 5
func (d *decoder) components(n *yaml.Node, v reflect.Value, key string, table map[string]*entry, what string) error {
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return d.src.errorAt(n, key, "want a list of %ss (each a name, or a mapping with a name and its options), got %s", what, describe(n))
	}
	out := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	var errs []error
	for i, item := range n.Content {
		item = resolveAlias(item)
		itemKey := fmt.Sprintf("%s[%d]", key, i)
		c, err := d.component(item, itemKey, table, what)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = reflect.Append(out, reflect.ValueOf(c))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	v.Set(out)
	return nil
}

// component reads one item of a components list.
func (d *decoder) component(item *yaml.Node, key string, table map[string]*entry, what string) (component, error) {
	nameNode := item
	var options []*yaml.Node
	switch item.Kind {
	case yaml.ScalarNode:
	case yaml.MappingNode:
		nameNode = nil
		for i := 0; i+1 < len(item.Content); i += 2 {
			if item.Content[i].Value == "name" {
				nameNode = item.Content[i+1]
			} else {
				options = append(options, item.Content[i], item.Content[i+1])
			}
		}
		if nameNode == nil {
			e := d.src.errorAt(item, key, "%s without a name; valid names: %v", what, names(table))
			return component{}, e
		}
	default:
		return component{}, d.src.errorAt(item, key, "want a %s name or a mapping with a name, got %s", what, describe(item))
	}
	name := nameNode.Value
	ent, ok := table[name]
	if !ok || nameNode.Kind != yaml.ScalarNode {
		e := d.src.errorAt(nameNode, key+".name", "unknown %s %s; valid: %v", what, describe(nameNode), names(table))
		e.Suggestion = nearest(name, names(table))
		return component{}, e
	}
	opts := reflect.New(ent.options).Elem()
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: options, Line: item.Line}
	if err := d.structValue(m, opts, key); err != nil {
		return component{}, err
	}
	lines := map[string]int{}
	for i := 0; i < len(options); i += 2 {
		lines[options[i].Value] = options[i].Line
	}
	return component{entry: ent, options: opts, src: d.src, line: item.Line, optionLines: lines}, nil
}

// encodeComponents writes a components list as decode reads it: one
// mapping per item, its name first, then every option.
func encodeComponents(v reflect.Value) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if v.Len() == 0 {
		s.Style = yaml.FlowStyle
	}
	for i := range v.Len() {
		c := v.Index(i).Interface().(component)
		m := encode(c.options)
		m.Content = append([]*yaml.Node{str("name"), str(c.entry.name)}, m.Content...)
		s.Content = append(s.Content, m)
	}
	return s
}
