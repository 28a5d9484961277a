package volt

import (
	"bytes"
	"log/slog"
	"testing"
)

// TestDefaultLogOn checks which logger a Config without Log gets: plain
// lines on a terminal, slog.Default() elsewhere or once the program set its
// own default.
func TestDefaultLogOn(t *testing.T) {
	var buf bytes.Buffer
	if _, ok := defaultLogOn(&buf, true).Handler().(*consoleHandler); !ok {
		t.Errorf("on a terminal: %T, want the plain console handler", defaultLogOn(&buf, true).Handler())
	}
	if l := defaultLogOn(&buf, false); l != slog.Default() {
		t.Errorf("not on a terminal: %T, want slog.Default()", l.Handler())
	}
	old := slog.Default()
	defer slog.SetDefault(old)
	mine := slog.New(slog.NewJSONHandler(&buf, nil))
	slog.SetDefault(mine)
	if l := defaultLogOn(&buf, true); l != mine {
		t.Errorf("after slog.SetDefault, on a terminal: %T, want the program's logger", l.Handler())
	}
}

// TestConsoleLines checks the console handler's lines (message, then
// attributes as key=value, quoted when needed; nothing below info) and that
// a message written while a bar line is open starts on a line of its own.
func TestConsoleLines(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(&consoleHandler{w: &buf})
	log.Debug("volt: not shown")
	log.Info("volt: Fit stopped: MaxEpochs=3 reached.")
	log.With("module", "*main.MLP").WithGroup("g").Warn("volt: a warning", "path", "a b.ckpt", "n", 2)

	p := NewProgressBar(ProgressBarConfig{Writer: &buf, Columns: 40})
	console.attach(p)
	defer console.detach(p)
	p.open = true // as after a redraw
	buf.WriteString("\rEpoch 0:  50%")
	log.Info("volt: message")
	if p.open {
		t.Error("the bar line is still open after a message")
	}
	want := "volt: Fit stopped: MaxEpochs=3 reached.\n" +
		"volt: a warning module=*main.MLP g.path=\"a b.ckpt\" g.n=2\n" +
		"\rEpoch 0:  50%\nvolt: message\n"
	if buf.String() != want {
		t.Errorf("console:\n%q\nwant\n%q", buf.String(), want)
	}
}
