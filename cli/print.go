package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// ConfigFileName is the name of the resolved config saved in a run's log
// directory.
const ConfigFileName = "config.yaml"

// document returns the resolved config as one YAML mapping, every key with
// the value in effect, sections in schema order.
func (s *schema) document() *yaml.Node {
	return s.sectionNode("")
}

// sectionNode encodes section key.
func (s *schema) sectionNode(key string) *yaml.Node {
	m := mapping()
	for _, k := range s.sections[key] {
		name := k[len(key):]
		if key != "" {
			name = name[1:]
		}
		var v *yaml.Node
		if p, ok := s.byKey[k]; ok {
			v = encode(p.target)
		} else {
			v = s.sectionNode(k)
		}
		m.Content = append(m.Content, str(name), v)
	}
	if len(m.Content) == 0 {
		m.Style = yaml.FlowStyle
	}
	return m
}

// writeConfig writes the resolved config as YAML to w, headed by a comment
// saying how to run it again.
func (s *schema) writeConfig(w io.Writer, program string) error {
	doc := s.document()
	doc.HeadComment = fmt.Sprintf("volt config, resolved; run it again with: %s fit --config THIS_FILE", program)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("cli: writing the config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("cli: writing the config: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// saveConfig writes the resolved config to dir/config.yaml, creating dir.
func (s *schema) saveConfig(dir, program string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cli: saving %s: %w", ConfigFileName, err)
	}
	path := filepath.Join(dir, ConfigFileName)
	var buf bytes.Buffer
	if err := s.writeConfig(&buf, program); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("cli: saving %s: %w", ConfigFileName, err)
	}
	return path, nil
}
