package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// LightningRunner finds Debian's python3 with torch (or VOLT_LIGHTNING_PYTHON)
// and unpacks Lightning 2.2.5's site from the repository's tarball, for a
// test whose package is dir levels below the repository root ("." for the
// root, ".." for a package one level down). run runs python with args,
// Lightning and the torch shim on PYTHONPATH, one BLAS thread, and returns
// its standard output, or an error with the end of its standard error. ok
// is false, with the reason, when this machine cannot run Lightning.
func LightningRunner(t testing.TB, root string) (run func(args ...string) ([]byte, error), ok bool, why string) {
	t.Helper()
	python := "/usr/bin/python3" // Debian's, which sees python3-torch
	if p := os.Getenv("VOLT_LIGHTNING_PYTHON"); p != "" {
		python = p
	}
	if out, err := exec.Command(python, "-c", "import torch").CombinedOutput(); err != nil {
		return nil, false, fmt.Sprintf("%s cannot import torch (apt-get install python3-torch): %v %s", python, err, bytes.TrimSpace(out))
	}
	site := t.TempDir()
	tarball := filepath.Join(root, "testdata", "lightning", "lightning-2.2.5-site.tar.xz")
	if out, err := exec.Command("tar", "-xJf", tarball, "-C", site).CombinedOutput(); err != nil {
		return nil, false, fmt.Sprintf("unpacking %s: %v %s", tarball, err, out)
	}
	shim, err := filepath.Abs(filepath.Join(root, "testdata", "lightning"))
	if err != nil {
		return nil, false, err.Error()
	}
	return func(args ...string) ([]byte, error) {
		cmd := exec.Command(python, args...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(site, "lsite")+string(os.PathListSeparator)+shim,
			"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "PYTHONWARNINGS=ignore")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v\n%s", python, strings.Join(args, " "), err, lastLines(stderr.String(), 30))
		}
		return out, nil
	}, true, ""
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
