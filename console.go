package volt

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// console is the terminal volt's messages and progress bars share: a
// message written while a bar line is open starts on a line of its own, and
// the bar goes on below it.
var console consoleState

type consoleState struct {
	mu  sync.Mutex
	bar *ProgressBar // the bar drawing on a terminal, if any
}

func (c *consoleState) attach(p *ProgressBar) {
	c.mu.Lock()
	c.bar = p
	c.mu.Unlock()
}

func (c *consoleState) detach(p *ProgressBar) {
	c.mu.Lock()
	if c.bar == p {
		c.bar = nil
	}
	c.mu.Unlock()
}

// write writes a message line to w, first ending an open bar line.
func (c *consoleState) write(w io.Writer, line string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bar != nil {
		c.bar.endLineLocked()
	}
	_, err := io.WriteString(w, line)
	return err
}

// startupHandler is slog's default handler as the program started: a
// handler that differs from it later was set by the program (slog.SetDefault).
var startupHandler = slog.Default().Handler()

// defaultLog is the logger of a Config without Log: on a terminal (stderr),
// unless the program set its own default logger, plain message lines as
// Lightning prints them ("volt: Fit stopped: MaxEpochs=3 reached."); else
// slog.Default().
func defaultLog() *slog.Logger { return defaultLogOn(os.Stderr, isTerminal(os.Stderr)) }

// defaultLogOn is defaultLog for a stderr w that is a terminal or not.
func defaultLogOn(w io.Writer, terminal bool) *slog.Logger {
	if terminal && slog.Default().Handler() == startupHandler {
		return slog.New(&consoleHandler{w: w})
	}
	return slog.Default()
}

// consoleHandler writes each record at info level or above as one plain
// line: the message, then its attributes as key=value.
type consoleHandler struct {
	w     io.Writer
	attrs string // " k=v" of WithAttrs, groups already applied
	group string // prefix of the keys: "g." for WithGroup("g")
}

func (h *consoleHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *consoleHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	b.WriteByte('\n')
	return console.write(h.w, b.String())
}

func (h *consoleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	for _, a := range attrs {
		appendAttr(&b, h.group, a)
	}
	return &consoleHandler{w: h.w, attrs: h.attrs + b.String(), group: h.group}
}

func (h *consoleHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &consoleHandler{w: h.w, attrs: h.attrs, group: h.group + name + "."}
}

// appendAttr writes " key=value", quoting a value with spaces or quotes.
func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			appendAttr(b, prefix+a.Key+".", g)
		}
		return
	}
	v := a.Value.String()
	if v == "" || strings.ContainsAny(v, " \"=\n\t") {
		v = fmt.Sprintf("%q", v)
	}
	fmt.Fprintf(b, " %s%s=%s", prefix, a.Key, v)
}
