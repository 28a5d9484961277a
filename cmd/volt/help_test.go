package main

import (
	"strings"
	"testing"
)

// TestHelpListsEveryCommand: every command that run accepts is in the help
// text (report was missing).
func TestHelpListsEveryCommand(t *testing.T) {
	_, help, _ := runVolt("help")
	for _, cmd := range []string{"ckpt", "report", "help"} {
		t.Run(cmd, func(t *testing.T) {
			if _, _, stderr := runVolt(cmd); strings.Contains(stderr, "unknown command") {
				t.Fatalf("volt %s is not a command: %s", cmd, stderr)
			}
			if !strings.Contains(help, "\n  volt "+cmd+" ") {
				t.Errorf("volt help does not list %q:\n%s", cmd, help)
			}
		})
	}
}
