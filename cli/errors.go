package cli

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one configuration problem: the key, where its value came from,
// what is wrong and, for an unknown key or name, the nearest valid one.
type Error struct {
	// Key is the dotted key ("trainer.max_epochs", "trainer.callbacks[0].monitor").
	Key string
	// File and Line locate the value when it came from a config file.
	File string
	Line int
	// Origin names the source otherwise: "flag --trainer.max_epochs",
	// "environment variable VOLT_TRAINER_MAX_EPOCHS".
	Origin string
	// Problem says what is wrong.
	Problem string
	// Suggestion is the nearest valid key or name, when Key or a name is unknown.
	Suggestion string
}

// Error formats the problem as "file:line: key: problem; did you mean X?".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Origin != "":
		fmt.Fprintf(&b, "%s: ", e.Origin)
	}
	if e.Key != "" && e.Origin != "flag --"+e.Key {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Problem)
	if e.Suggestion != "" {
		fmt.Fprintf(&b, "; did you mean %s?", e.Suggestion)
	}
	return b.String()
}

// source is where a value came from: a file, a flag or an environment
// variable.
type source struct {
	file   string // a config file; line numbers come from the nodes
	origin string // a flag or an environment variable
}

// errorAt returns an Error for key at node n of this source.
func (s source) errorAt(n *yaml.Node, key, format string, args ...any) *Error {
	e := &Error{Key: key, Origin: s.origin, Problem: fmt.Sprintf(format, args...)}
	if s.file != "" {
		e.File, e.Line = s.file, lineOf(n)
	}
	return e
}

// where describes the source at node n, for messages that list several.
func (s source) where(n *yaml.Node) string {
	if s.file != "" {
		return fmt.Sprintf("%s:%d", s.file, lineOf(n))
	}
	return s.origin
}

// lineOf returns n's line, 0 for nil.
func lineOf(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}
