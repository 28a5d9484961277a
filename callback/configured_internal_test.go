package callback

import (
	"errors"
	"testing"
)

// toyConfig and toyCallback exercise newCallback.
type toyConfig struct{ N int }

type toyCallback struct {
	configured[toyConfig]
	built bool
}

// newToy fills in N's default 3, and refuses a negative N after having
// changed it (so that the kept configuration must be the one given).
func newToy(cfg *toyConfig) (*toyCallback, error) {
	if cfg.N == 0 {
		cfg.N = 3
	}
	if cfg.N < 0 {
		cfg.N = 99
		return nil, errors.New("toyConfig.N: must be >= 0")
	}
	return &toyCallback{built: true}, nil
}

// TestNewCallback: a good configuration is kept with its defaults filled
// in and Validate is nil; a bad one gives a callback that keeps the
// configuration as given, and its Validate reports the error.
func TestNewCallback(t *testing.T) {
	for _, tc := range []struct {
		given, kept toyConfig
		built       bool
		err         string
	}{
		{toyConfig{}, toyConfig{N: 3}, true, ""},
		{toyConfig{N: 5}, toyConfig{N: 5}, true, ""},
		{toyConfig{N: -1}, toyConfig{N: -1}, false, "toyConfig.N: must be >= 0"},
	} {
		cb := newCallback(tc.given, newToy)
		err := cb.Validate()
		if (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("%+v: Validate %v, want %q", tc.given, err, tc.err)
		}
		if cb.cfg != tc.kept || cb.built != tc.built {
			t.Errorf("%+v: kept %+v (built %v), want %+v (built %v)", tc.given, cb.cfg, cb.built, tc.kept, tc.built)
		}
	}
}
