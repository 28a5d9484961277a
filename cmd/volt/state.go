package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// opaqueStates are the trainer-state keys whose values are states that
// callbacks, schedulers, the data module and the loss scaler encoded
// themselves: bytes, which JSON stores as base64 strings. Most are JSON;
// inspect shows those decoded.
var opaqueStates = map[string]bool{"callbacks": true, "schedulers": true, "datamodule": true, "loss_scaler": true}

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
		v := fields[k]
		if opaqueStates[k] {
			v = decodeOpaque(v)
		}
		if _, err := fmt.Fprintf(w, "  %s: %s\n", k, indentJSON(v, "  ")); err != nil {
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

// decodeOpaque returns v with every string in it that is base64 of a JSON
// value replaced by that value; other strings stay as they are.
func decodeOpaque(v json.RawMessage) json.RawMessage {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return v
	}
	out, err := json.Marshal(decodeStrings(x))
	if err != nil {
		return v
	}
	return out
}

func decodeStrings(x any) any {
	switch x := x.(type) {
	case string:
		if b, err := base64.StdEncoding.DecodeString(x); err == nil && json.Valid(b) {
			return json.RawMessage(b)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = decodeStrings(e)
		}
	case []any:
		for i, e := range x {
			x[i] = decodeStrings(e)
		}
	}
	return x
}
