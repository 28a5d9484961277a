package volt_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// TestSaveSaysStaleTempsAndKeepsThem: the temporary file of a save an
// earlier run did not finish (killed during the write) is said, once per
// directory, at the first save there, naming it; volt deletes no file it
// did not write in this run, so it stays (it stayed silently forever). A
// recent one (a save in progress) is not said.
func TestSaveSaysStaleTempsAndKeepsThem(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  time.Duration
		want bool
	}{
		{"idle two minutes", 2 * time.Minute, true},
		{"just written", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			temp := filepath.Join(dir, ".epoch=0-step=4.ckpt.123456.tmp")
			if err := os.WriteFile(temp, []byte("partial"), 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-tc.age)
			if err := os.Chtimes(temp, old, old); err != nil {
				t.Fatal(err)
			}
			var said bytes.Buffer
			cfg := quiet(volt.Config{MaxEpochs: 1})
			cfg.Log = slog.New(slog.NewTextHandler(&said, nil))
			tr := testutil.Fit(t, cfg, &boring{}, boringData())
			for _, name := range []string{"a.ckpt", "b.ckpt"} {
				if err := tr.SaveCheckpoint(filepath.Join(dir, name), false); err != nil {
					t.Fatal(err)
				}
			}
			if n := strings.Count(said.String(), "temporary files of saves an earlier run did not finish"); n != map[bool]int{true: 1, false: 0}[tc.want] {
				t.Errorf("said %d times, want it said %v once; the trainer said:\n%s", n, tc.want, said.String())
			}
			if tc.want && !strings.Contains(said.String(), filepath.Base(temp)) {
				t.Errorf("the warning does not name %s:\n%s", filepath.Base(temp), said.String())
			}
			if _, err := os.Stat(temp); err != nil {
				t.Errorf("the temporary file is gone: %v", err)
			}
		})
	}
}
