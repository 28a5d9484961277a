package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// TestLightningSpellings: LightningCLI's spellings are accepted:
// --trainer.device_ids (not the mechanical device_i_ds), fit
// --print_config (printing what print-config prints), shard_uneven by name.
func TestLightningSpellings(t *testing.T) {
	dir := t.TempDir()
	printed := mustRun(t, dir, "print-config", "--trainer.max_steps=7")
	if got := mustRun(t, dir, "fit", "--print_config", "--trainer.max_steps=7"); got != printed {
		t.Errorf("fit --print_config printed\n%s\nprint-config printed\n%s", got, printed)
	}
	if got := mustRun(t, dir, "fit", "--print-config", "--trainer.max_steps=7"); got != printed {
		t.Errorf("fit --print-config differs from print-config")
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("l.yaml", []byte("trainer:\n  logger: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (fixture{args: []string{"fit", "--config", "l.yaml"}}).loadHere(t); err == nil ||
		!strings.Contains(err.Error(), "did you mean trainer.loggers (a list by name) or trainer.disable_loggers?") {
		t.Errorf("trainer.logger in a file: %v", err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string // "" for success
		check   func(t *testing.T, l loaded)
	}{
		{"device_ids is a key (CPU refuses GPU ids, naming the flag)", []string{"fit", "--trainer.device_ids=[0]"},
			"flag --trainer.device_ids: Config.DeviceIDs lists GPUs [0]", nil},
		{"the mechanical spelling is refused", []string{"fit", "--trainer.device_i_ds=[0]"},
			"did you mean --trainer.device_ids?", nil},
		{"shard_uneven by name", []string{"fit", "--trainer.shard_uneven=drop_tail"}, "", func(t *testing.T, l loaded) {
			if got := l.inv.rc.trainer.ShardUneven; got != data.DropTail {
				t.Errorf("ShardUneven = %v, want DropTail", got)
			}
			if !strings.Contains(l.printed(t), "shard_uneven: drop_tail\n") {
				t.Errorf("printed:\n%s", l.printed(t))
			}
		}},
		{"a LightningCLI key volt spells otherwise names volt's", []string{"fit", "--trainer.enable_checkpointing=false"},
			"did you mean --trainer.disable_checkpointing (inverted", nil},
		{"shard_uneven as a number is refused with the names", []string{"fit", "--trainer.shard_uneven=1"},
			`want one of pad_repeat|drop_tail|keep_uneven, got "1"`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := fixture{args: tc.args}.load(t)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			case tc.check != nil:
				tc.check(t, l)
			}
		})
	}
}

// TestHelpIsWrapped: fit --help fits 80 columns (a word longer than a line
// aside), names no Go field at the start of a help text, and says each
// help text once.
func TestHelpIsWrapped(t *testing.T) {
	t.Setenv("COLUMNS", "")
	var stderr bytes.Buffer
	if _, err := load(newSettings([]Option{WithArgs("fit", "--help"), WithOutput(&bytes.Buffer{}, &stderr)}),
		&testutil.Boring{LR: 0.05}, testutil.NewBoringDataModule()); err != nil {
		t.Fatal(err)
	}
	help := stderr.String()
	seen := map[string]string{}
	var flag string
	for _, line := range strings.Split(help, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 && strings.Contains(strings.TrimSpace(line), " ") {
			t.Errorf("line of %d characters: %q", n, line)
		}
		switch {
		case strings.HasPrefix(line, "  -"):
			flag = line
		case strings.HasPrefix(line, usageIndent) && flag != "":
			if first, ok := seen[line]; ok && len(line) > 40 && first != flag {
				t.Errorf("help line %q under both %q and %q", line, first, flag)
			}
			seen[line] = flag
		}
	}
	for _, w := range []string{"--trainer.device_ids [int]", "--print_config", "--trainer.log_every_n_steps int (default: 50)",
		"      Stops training after this many epochs."} {
		if !strings.Contains(help, w) {
			t.Errorf("no %q in the help:\n%s", w, help)
		}
	}
	if strings.Contains(help, "LimitTrainBatches") || strings.Contains(help, "      MaxEpochs ") {
		t.Errorf("the help names Go fields where a flag would do:\n%s", help)
	}
}
