// Package mpitest runs MPI programs from Go tests: it builds a package with
// -tags mpi and launches it under mpirun with the environment CI needs
// (running as root, more ranks than cores). Start with [Require], then
// [Build].
//
// Tests that use it skip when OpenMPI (mpirun, or the headers that
// pkg-config finds as "ompi") is missing, and fail instead when the
// environment variable VOLT_REQUIRE_MPI=1 or VOLT_REQUIRE_TOOLS=1 (every
// tool) is set, as CI sets both.
//
// Building with -tags mpi changes the file set of the packages under
// dist/internal/mpi, so the go command caches the MPI build apart from the
// default one (golang/go#73033 is about tag-conditional #cgo lines within
// one file set, which this layout avoids).
package mpitest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/testenv"
)

// RequireToolsVar is the environment variable that turns a missing tool
// from a skip into a failure.
const RequireToolsVar = testenv.RequireToolsVar

// RequireMPIVar is the environment variable that turns a missing MPI, and
// no other tool, from a skip into a failure.
const RequireMPIVar = "VOLT_REQUIRE_MPI"

// missing skips t, or fails it when RequireMPIVar or RequireToolsVar is "1".
func missing(t testing.TB, what string) {
	t.Helper()
	testenv.Missing(t, what, "Debian: apt-get install openmpi-bin libopenmpi-dev pkg-config", RequireMPIVar)
}

// Require skips (or fails, see RequireToolsVar) when OpenMPI is not
// installed: mpirun, pkg-config and the "ompi" pkg-config package.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		missing(t, "mpirun is not in PATH")
	}
	if err := exec.Command("pkg-config", "--exists", "ompi").Run(); err != nil {
		missing(t, "pkg-config finds no OpenMPI development files (\"ompi\")")
	}
}

// Build compiles the Go package pkg (an import path or a directory relative
// to the test's package) with -tags mpi into a temporary directory and
// returns the binary's path. It calls Require first.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	Require(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		missing(t, "the go command is not in PATH to build "+pkg)
	}
	name := filepath.Base(pkg)
	if name == "." || name == ".." || name == string(filepath.Separator) {
		name = "program" // pkg is "." (the test's own package) or a parent
	}
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command(goBin, "build", "-tags", "mpi", "-o", bin, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi %s: %v\n%s", pkg, err, out)
	}
	readSources(t, goBin, pkg)
	return bin
}

// sourcesTemplate lists the Go, cgo and C files of a package that is not
// in the standard library, one path a line.
const sourcesTemplate = `{{if not .Standard}}{{$d := .Dir}}` +
	`{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CgoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}` +
	`{{range .CFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .HFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}`

// readSources reads every source file the -tags mpi build of pkg uses.
// go test caches a test's result keyed on the files the test itself opens,
// and the test binary is built without -tags mpi, so without this a change
// to the MPI-only files (or to the launched program) would not re-run the
// test.
func readSources(t testing.TB, goBin, pkg string) {
	t.Helper()
	out, err := exec.Command(goBin, "list", "-tags", "mpi", "-deps", "-f", sourcesTemplate, pkg).Output()
	if err != nil {
		t.Fatalf("go list -tags mpi -deps %s: %v", pkg, err)
	}
	for _, path := range strings.Fields(string(out)) {
		if _, err := os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
}

// Result is what one mpirun job did.
type Result struct {
	Stdout, Stderr string
	// Err is the job's exit error (nil on success; an *exec.ExitError when
	// a rank failed).
	Err error
	// Elapsed is the wall time from start to exit.
	Elapsed time.Duration
	// TimedOut reports that the job was killed at the timeout.
	TimedOut bool
}

// ownSessionDir gives cmd's mpirun a session directory of its own.
// OpenMPI 4 creates /tmp/ompi.HOST.UID on first use, and two mpiruns
// starting at once (go test runs dist's and ddptrainee's packages in
// parallel) can both find it missing and one fail with "A call to mkdir
// was unable to create the desired directory … File exists".
func ownSessionDir(t testing.TB, cmd *exec.Cmd) {
	dir, err := os.MkdirTemp("", "ompi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cmd.Env = append(cmd.Env, "OMPI_MCA_orte_tmpdir_base="+dir)
}

// Run runs `mpirun -np ranks bin args...` (dist.MPIRunCommand) and waits
// for it, killing it after timeout.
func Run(t testing.TB, timeout time.Duration, ranks int, bin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd, err := dist.MPIRunCommand(ctx, ranks, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	ownSessionDir(t, cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	err = cmd.Run()
	return Result{
		Stdout: stdout.String(), Stderr: stderr.String(), Err: err,
		Elapsed: time.Since(start), TimedOut: errors.Is(ctx.Err(), context.DeadlineExceeded),
	}
}

// RunWatching is Run that also calls watch with each line of stdout as it
// arrives (to act on the job while it runs, e.g. kill a rank). Stdout is
// still returned whole in the Result.
func RunWatching(t testing.TB, timeout time.Duration, ranks int, bin string, args []string, watch func(line string)) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd, err := dist.MPIRunCommand(ctx, ranks, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	ownSessionDir(t, cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		stdout.WriteString(sc.Text() + "\n")
		watch(sc.Text())
	}
	err = cmd.Wait()
	return Result{
		Stdout: stdout.String(), Stderr: stderr.String(), Err: err,
		Elapsed: time.Since(start), TimedOut: errors.Is(ctx.Err(), context.DeadlineExceeded),
	}
}
