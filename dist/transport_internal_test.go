package dist

import (
	"os"
	"testing"
)

// TestSetTransportDefaults: an unset SingleCopyVar becomes none; a set one
// (the user's choice, even empty) stays.
func TestSetTransportDefaults(t *testing.T) {
	for _, c := range []struct {
		name        string
		set         bool
		value, want string
	}{
		{"unset", false, "", "none"},
		{"cma", true, "cma", "cma"},
		{"empty", true, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(SingleCopyVar, c.value) // restored when the test ends
			if !c.set {
				os.Unsetenv(SingleCopyVar)
			}
			if err := setTransportDefaults(); err != nil {
				t.Fatal(err)
			}
			if got := os.Getenv(SingleCopyVar); got != c.want {
				t.Errorf("%s = %q, want %q", SingleCopyVar, got, c.want)
			}
		})
	}
}
