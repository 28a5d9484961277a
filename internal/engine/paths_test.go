package engine

import "testing"

// TestModuleVariable: the module's variables are everything but volt's own
// (under Prefix) and GoMLX's internals (a name starting with "#", at the
// root or in a scope).
func TestModuleVariable(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/dense/weights", true},
		{"/backbone/bn/running_mean", true},
		{"/volume/weights", true}, // "/vol…" is not "/volt/"
		{"/volt/optimizer/adam/m", false},
		{"/#rngState", false},
		{"/encoder/#rngState", false},
	} {
		if got := ModuleVariable(tc.path); got != tc.want {
			t.Errorf("ModuleVariable(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
