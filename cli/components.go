package cli

import (
	"errors"
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"
)

// components reads a list of callbacks or loggers (or one item alone, a
// list of one). Each item is a name
// ("timer") or a mapping from one name to that entry's options:
// "{early_stopping: {monitor: val_loss, patience: 5}}" (in block style, the
// options indented under the name). The name is a key of its own so that it
// cannot collide with an option (the loggers have a "name" option).
func (d *decoder) components(n *yaml.Node, v reflect.Value, key string, table map[string]*entry, what string) error {
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		// One item alone: "--trainer.callbacks=timer".
		n = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: n.Line, Content: []*yaml.Node{n}}
	}
	out := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	var errs []error
	for i, item := range n.Content {
		c, err := d.component(resolveAlias(item), fmt.Sprintf("%s[%d]", key, i), table, what)
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
	nameNode, options := item, (*yaml.Node)(nil)
	switch {
	case item.Kind == yaml.ScalarNode && !isNull(item):
	case item.Kind == yaml.MappingNode && len(item.Content) == 2:
		nameNode, options = item.Content[0], resolveAlias(item.Content[1])
	default:
		return component{}, d.src.errorAt(item, key, "want a %s name, or one name mapped to its options (%s), got %s",
			what, "{early_stopping: {monitor: val_loss}}", describe(item))
	}
	name := nameNode.Value
	ent, ok := table[name]
	if !ok {
		e := d.src.errorAt(nameNode, key, "unknown %s %q; valid: %v", what, name, names(table))
		e.Suggestion = nearest(name, names(table))
		return component{}, e
	}
	opts := reflect.New(ent.options).Elem()
	if err := d.structValue(options, opts, key+"."+name); err != nil {
		return component{}, err
	}
	lines := map[string]int{}
	if options != nil && options.Kind == yaml.MappingNode {
		for i := 0; i < len(options.Content); i += 2 {
			lines[options.Content[i].Value] = options.Content[i].Line
		}
	}
	return component{entry: ent, options: opts, src: d.src, line: nameNode.Line, optionLines: lines}, nil
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
		options := encode(c.options)
		if len(options.Content) == 0 {
			options.Style = yaml.FlowStyle
		}
		item := mapping()
		item.Content = []*yaml.Node{str(c.entry.name), options}
		s.Content = append(s.Content, item)
	}
	return s
}
