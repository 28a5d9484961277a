package cli

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// setting is one value given on the command line or in the environment,
// before it is read: the key and the text.
type setting struct {
	key    string
	raw    string
	origin string
}

// loadFile reads a YAML config file and applies its keys.
func (s *schema) loadFile(path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return &Error{File: path, Problem: err.Error()}
	}
	return s.loadYAML(path, text)
}

// yamlLine reads the line of a YAML syntax error.
var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// loadYAML applies the keys of a YAML document named name.
func (s *schema) loadYAML(name string, text []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		e := &Error{File: name, Problem: strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(e.Problem); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Problem = m[2]
		}
		return e
	}
	if len(doc.Content) == 0 {
		return nil // an empty file
	}
	d := &decoder{src: source{file: name}, reg: s.reg}
	return s.applySection(d, "", doc.Content[0])
}

// applySection applies a mapping to the keys of section key.
func (s *schema) applySection(d *decoder, key string, n *yaml.Node) error {
	n = resolveAlias(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		what := "a config file"
		if key != "" {
			what = "section " + key
		}
		return d.src.errorAt(n, key, "%s must be a mapping of keys, got %s", what, describe(n))
	}
	var errs []error
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := joinKey(key, k.Value)
		if first, dup := seen[k.Value]; dup {
			errs = append(errs, d.src.errorAt(k, sub, "set twice (first at %s)", d.src.at(first)))
			continue
		}
		seen[k.Value] = k
		if p, ok := s.byKey[sub]; ok {
			errs = append(errs, s.set(d, p, v, d.src.at(k)))
			continue
		}
		if _, ok := s.sections[sub]; ok {
			errs = append(errs, s.applySection(d, sub, v))
			continue
		}
		e := d.src.errorAt(k, sub, "unknown key")
		e.Suggestion = suggestKey(sub, s.keys())
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// set reads n into p and records where the value came from.
func (s *schema) set(d *decoder, p *param, n *yaml.Node, where location) error {
	if err := d.decode(n, p.target, p.key); err != nil {
		return err
	}
	p.setAt = where
	return nil
}

// apply applies flag or environment settings in order.
func (s *schema) apply(settings []setting) error {
	var errs []error
	for _, st := range settings {
		p := s.byKey[st.key]
		d := &decoder{src: source{origin: st.origin}, reg: s.reg}
		n, err := valueNode(p, st.raw)
		if err != nil {
			errs = append(errs, &Error{Key: st.key, Origin: st.origin, Problem: err.Error()})
			continue
		}
		errs = append(errs, s.set(d, p, n, location{origin: st.origin}))
	}
	return errors.Join(errs...)
}

// valueNode reads the text of a flag or environment variable: as is for a
// string key, as YAML otherwise (so that "0.5", "[a, b]" and "{across_epochs:
// 3}" mean what they mean in a file).
func valueNode(p *param, raw string) (*yaml.Node, error) {
	if p.target.Kind() == reflect.String {
		return str(raw), nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, fmt.Errorf("cannot read %q as YAML: %s", raw, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return null(), nil
	}
	return doc.Content[0], nil
}

// envName is the environment variable of key: prefix_KEY with dots as
// underscores (VOLT_TRAINER_MAX_EPOCHS).
func envName(prefix, key string) string {
	return prefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// envSettings returns the keys set in the environment. A variable that
// starts like a key (PREFIX_TRAINER_, PREFIX_MODEL_, PREFIX_DATA_) but is
// none is an error naming the nearest one: a misspelt variable is not
// silently ignored.
func (s *schema) envSettings(prefix string, environ []string) ([]setting, error) {
	known := map[string]string{}
	var names []string
	for _, p := range s.params {
		known[envName(prefix, p.key)] = p.key
		names = append(names, envName(prefix, p.key))
	}
	var sections []string
	for _, sec := range s.sections[""] {
		if _, isSection := s.sections[sec]; isSection {
			sections = append(sections, envName(prefix, sec)+"_")
		}
	}
	var out []setting
	var errs []error
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if key, ok := known[name]; ok {
			out = append(out, setting{key: key, raw: value, origin: "environment variable " + name})
			continue
		}
		for _, sec := range sections {
			if strings.HasPrefix(name, sec) {
				errs = append(errs, &Error{Origin: "environment variable " + name, Problem: "no such key", Suggestion: nearest(name, names)})
				break
			}
		}
	}
	return out, errors.Join(errs...)
}
