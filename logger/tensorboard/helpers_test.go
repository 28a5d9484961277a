package tensorboard

import (
	"testing"
	"time"
)

// intPtr returns a pointer to v.
func intPtr(v int) *int { return &v }

// fakeClock is a settable clock for Logger.now.
type fakeClock struct{ t time.Time }

// now returns the clock's time.
func (c *fakeClock) now() time.Time { return c.t }

// newTestLogger constructs a Logger in a temporary SaveDir with a fake
// clock starting at a fixed time.
func newTestLogger(t *testing.T, cfg Config) (*Logger, *fakeClock) {
	t.Helper()
	if cfg.SaveDir == "" {
		cfg.SaveDir = t.TempDir()
	}
	l := New(cfg)
	err := l.Validate()
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	clock := &fakeClock{t: time.Unix(1_700_000_000, 250_000_000)}
	l.now = clock.now
	return l, clock
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
