package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// writeState prints the trainer state: for a JSON object, each top-level
// key, sorted, with its value as indented JSON; otherwise the whole value.
func writeState(w io.Writer, state json.RawMessage) error {
	if len(bytes.TrimSpace(state)) == 0 {
		_, err := fmt.Fprintln(w, "state:         (none)")
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(state, &fields); err != nil || len(fields) == 0 {
		_, err := fmt.Fprintf(w, "state:         %s\n", indentJSON(state, ""))
		return err
	}
	if _, err := fmt.Fprintln(w, "state:"); err != nil {
		return err
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, err := fmt.Fprintf(w, "  %s: %s\n", k, indentJSON(fields[k], "  ")); err != nil {
			return err
		}
	}
	return nil
}

// indentJSON returns v indented by two spaces per level, every line after
// the first starting with prefix; v itself when it is not valid JSON.
func indentJSON(v json.RawMessage, prefix string) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, v, prefix, "  "); err != nil {
		return string(v)
	}
	return buf.String()
}
