package main

import (
	"strings"
	"testing"
)

func TestRunUsage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderr     string
		stdoutNone bool
	}{
		{name: "no args", args: nil, code: 0, stdout: "Usage:\n  volt ckpt inspect FILE"},
		{name: "help", args: []string{"help"}, code: 0, stdout: "Usage:"},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: "Usage:"},
		{name: "unknown command", args: []string{"train"}, code: 2, stderr: "volt: unknown command \"train\"\n\nvolt: tools", stdoutNone: true},
		{name: "ckpt alone", args: []string{"ckpt"}, code: 2, stderr: "ckpt needs a subcommand (valid: inspect)", stdoutNone: true},
		{name: "unknown ckpt subcommand", args: []string{"ckpt", "rm"}, code: 2, stderr: `unknown ckpt subcommand "rm" (valid: inspect)`, stdoutNone: true},
		{name: "inspect without file", args: []string{"ckpt", "inspect"}, code: 2, stderr: "ckpt inspect needs exactly one FILE, got 0 arguments", stdoutNone: true},
		{name: "inspect two files", args: []string{"ckpt", "inspect", "a", "b"}, code: 2, stderr: "got 2 arguments", stdoutNone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runVolt(tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
			if !strings.Contains(stdout, tt.stdout) || (tt.stdoutNone && stdout != "") {
				t.Errorf("stdout %q, want it to contain %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
			if tt.code == 2 && !strings.Contains(stderr, "Usage:") {
				t.Errorf("stderr of a usage error lacks the usage: %q", stderr)
			}
		})
	}
}
