package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/voltml/volt"
)

// asMainEnv set to 1 makes the test binary run main (see TestMain).
const asMainEnv = "CKPTRACE_AS_MAIN"

// TestMain runs main itself when the test starts this binary as a run.
func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunsAtOnceShareADirectory: runs started at once with one explicit
// ModelCheckpoint directory and one file-name template, which render the
// same names at about the same moments (the runs are identical but for
// their names), each end holding their own files: every file a run's
// ModelCheckpoint names (its top 2 and its last file) exists, no two runs
// name the same file, nothing else is left in the directory, and each
// file holds the checkpoint of the run that names it (the Run
// hyper-parameter LoadModule reads back). A run that took another's name,
// or removed a file another wrote, fails it.
func TestRunsAtOnceShareADirectory(t *testing.T) {
	const runs, rounds = 4, 3
	for round := range rounds {
		dir := t.TempDir()
		var outs [runs]bytes.Buffer
		var errs [runs]bytes.Buffer
		cmds := make([]*exec.Cmd, runs)
		for i := range cmds {
			cmds[i] = exec.Command(os.Args[0], "-run", fmt.Sprint("r", i), "-dir", dir, "-epochs", "12", "-k", "2")
			cmds[i].Env = append(os.Environ(), asMainEnv+"=1")
			cmds[i].Stdout, cmds[i].Stderr = &outs[i], &errs[i]
		}
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		owner := map[string]string{}
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("round %d run %d: %v\n%s", round, i, err, errs[i].String())
			}
			var r Result
			if err := json.Unmarshal(outs[i].Bytes(), &r); err != nil {
				t.Fatalf("round %d run %d: %v in %q", round, i, err, outs[i].String())
			}
			if _, ok := r.Kept[r.Best]; !ok || len(r.Kept) != 2 {
				t.Errorf("round %d run %s: best %s, kept %v: want the best among the 2 kept", round, r.Run, r.Best, r.Kept)
			}
			held := []string{r.Last}
			for path := range r.Kept {
				held = append(held, path)
			}
			for _, path := range held {
				if other, taken := owner[path]; taken {
					t.Errorf("round %d: runs %s and %s both hold %s", round, other, r.Run, filepath.Base(path))
				}
				owner[path] = r.Run
				m, err := volt.LoadModule(path, &Net{})
				switch {
				case err != nil:
					t.Errorf("round %d run %s: its checkpoint %s: %v", round, r.Run, filepath.Base(path), err)
				case m.Run != r.Run:
					t.Errorf("round %d run %s: its checkpoint %s was written by run %s", round, r.Run, filepath.Base(path), m.Run)
				}
			}
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if len(names) != runs*3 {
			t.Errorf("round %d: %d files %q, want the %d the runs hold", round, len(names), names, runs*3)
		}
		if t.Failed() {
			slices.Sort(names)
			t.Fatalf("round %d: the directory holds %q", round, names)
		}
	}
}
