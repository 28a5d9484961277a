package dist_test

import (
	"os"
	"testing"
)

// unsetEnv removes name from the environment for the rest of the test
// (t.Setenv first, so the old value comes back afterwards).
func unsetEnv(t *testing.T, name string) {
	t.Helper()
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}
