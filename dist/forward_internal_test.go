package dist

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestStatParentPID: the parent pid is read after the command name, which
// may hold spaces and parentheses.
func TestStatParentPID(t *testing.T) {
	for _, tc := range []struct {
		stat string
		want int
		ok   bool
	}{
		{"4242 (ddptrainee) S 4240 4242 4240 0 -1", 4240, true},
		{"17 (a (b) c) R 9 17 9 0", 9, true},
		{"17 (no parent", 0, false},
		{"17 (x) S", 0, false},
	} {
		got, ok := statParentPID(tc.stat)
		if got != tc.want || ok != tc.ok {
			t.Errorf("statParentPID(%q) = %d, %v; want %d, %v", tc.stat, got, ok, tc.want, tc.ok)
		}
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if got, ok := parentPID(os.Getpid()); !ok || got != os.Getppid() {
		t.Errorf("parentPID(self) = %d, %v; want %d", got, ok, os.Getppid())
	}
}

// TestRankPIDsRunThisProgram: the ranks are the children running this
// executable; a child running another program is not one.
func TestRankPIDsRunThisProgram(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rank := exec.Command(self, "-test.run=^TestHelperSleep$")
	rank.Env = append(os.Environ(), "VOLT_DIST_HELPER_SLEEP=1")
	other := exec.Command("sleep", "5")
	for _, c := range []*exec.Cmd{rank, other} {
		if err := c.Start(); err != nil {
			t.Skip(err)
		}
		defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	}
	if got := rankPIDs(os.Getpid()); !slices.Equal(got, []int{rank.Process.Pid}) {
		t.Errorf("rankPIDs = %v, want [%d] (not sleep's %d)", got, rank.Process.Pid, other.Process.Pid)
	}
}

// TestHelperSleep is the child of TestRankPIDsRunThisProgram.
func TestHelperSleep(t *testing.T) {
	if os.Getenv("VOLT_DIST_HELPER_SLEEP") != "1" {
		t.Skip("a helper process")
	}
	time.Sleep(5 * time.Second)
}
