package simdcheck_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/simdcheck"
	"github.com/voltml/volt/internal/testenv"
)

// TestWarningOfABuildWithoutSIMD builds testdata/warn (WarnOnce twice, as
// two NewTrainer calls) as a user would, with GOEXPERIMENT unset and with
// GOEXPERIMENT=simd, and checks its stderr: the warning once, with the fix,
// without simd; nothing with simd or when silenced.
func TestWarningOfABuildWithoutSIMD(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds volt again without GOEXPERIMENT=simd (about a minute on 2 cores)")
	}
	if runtime.GOARCH != "amd64" {
		t.Skipf("GoMLX's Go backend has SIMD kernels on amd64 only; this is %s", runtime.GOARCH)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "the go command is not on PATH", "install Go")
	}
	cases := []struct {
		name       string
		experiment string // GOEXPERIMENT of the build
		env        []string
		warns      bool
	}{
		{name: "without simd", experiment: "", warns: true},
		{name: "without simd, silenced", experiment: "", env: []string{simdcheck.SilenceEnv + "=1"}},
		{name: "with simd", experiment: "simd"},
	}
	dir := t.TempDir()
	bins := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin, ok := bins[c.experiment]
			if !ok {
				bin = filepath.Join(dir, "warn-"+c.experiment)
				build := exec.Command(goCmd, "build", "-o", bin, "./testdata/warn")
				build.Env = append(environWithout("GOEXPERIMENT", "GOFLAGS"), "GOEXPERIMENT="+c.experiment)
				if out, err := build.CombinedOutput(); err != nil {
					t.Fatalf("go build with GOEXPERIMENT=%q: %v\n%s", c.experiment, err, out)
				}
				bins[c.experiment] = bin
			}
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin)
			cmd.Env = append(environWithout(simdcheck.SilenceEnv), c.env...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || stdout.String() != "ok\n" {
				t.Fatalf("run: %v, stdout %q\n%s", err, stdout.String(), stderr.String())
			}
			got := stderr.String()
			want := 0
			if c.warns {
				want = 1
			}
			if n := strings.Count(got, "built without GOEXPERIMENT=simd"); n != want {
				t.Errorf("stderr has the warning %d times, want %d:\n%s", n, want, got)
			}
			if c.warns && !strings.Contains(got, "go env -w GOEXPERIMENT=simd") || c.warns && !strings.Contains(got, simdcheck.SilenceEnv+"=1") {
				t.Errorf("the warning does not say how to fix or silence it:\n%s", got)
			}
		})
	}
}

// TestApplies checks when the warning applies.
func TestApplies(t *testing.T) {
	cases := []struct {
		backend      string
		builtWithout bool
		silenced     bool
		want         bool
	}{
		{backend: "go:ops_sequential", builtWithout: true, want: true},
		{backend: "go", builtWithout: true, want: true},
		{backend: "", builtWithout: true, want: true},
		{backend: "go:ops_sequential", builtWithout: false, want: false},
		{backend: "xla:cuda", builtWithout: true, want: false},
		{backend: "go", builtWithout: true, silenced: true, want: false},
	}
	for _, c := range cases {
		if c.silenced {
			t.Setenv(simdcheck.SilenceEnv, "1")
		} else {
			t.Setenv(simdcheck.SilenceEnv, "")
		}
		if got := simdcheck.Applies(c.backend, c.builtWithout); got != c.want {
			t.Errorf("Applies(%q, %v) with silenced=%v = %v, want %v", c.backend, c.builtWithout, c.silenced, got, c.want)
		}
	}
}

// environWithout is os.Environ without the given variables.
func environWithout(names ...string) []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, name)
	})
}
