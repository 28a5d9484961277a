package tensorboard_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/logger/tensorboard"
)

// TestBadConfigReachesNewTrainer: New cannot fail; a bad field (or a
// SaveDir/Name whose versions cannot be listed) is reported by Validate,
// by NewTrainer naming the logger's place in Config.Loggers, and by every
// write, which creates nothing.
func TestBadConfigReachesNewTrainer(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  tensorboard.Config
		want string // in Validate's error; "" for a valid config
	}{
		{"zero", tensorboard.Config{}, ""},
		{"negative version", tensorboard.Config{Version: new(-1)}, "Config.Version is -1; must be >= 0"},
		{"negative flush", tensorboard.Config{FlushEvery: -1}, "Config.FlushEvery is -1"},
		{"negative interval", tensorboard.Config{FlushInterval: -1}, "Config.FlushInterval is -1ns"},
		{"bad version name", tensorboard.Config{VersionName: "a/b"}, "VersionName"},
		{"unlistable save dir", tensorboard.Config{SaveDir: notADir, Name: "."}, notADir},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.cfg.SaveDir == "" {
				tc.cfg.SaveDir = dir
			}
			tb := tensorboard.New(tc.cfg)
			verr := tb.Validate()
			_, err := volt.NewTrainer(volt.Config{DefaultRootDir: dir, Loggers: []volt.Logger{tb}})
			if tc.want == "" {
				if verr != nil || err != nil {
					t.Fatalf("Validate = %v, NewTrainer = %v on a valid config", verr, err)
				}
				return
			}
			if verr == nil || !strings.Contains(verr.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error containing %q", verr, tc.want)
			}
			if want := fmt.Sprintf("Config.Loggers[0]: *tensorboard.Logger: %v", verr); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("NewTrainer error = %v, want one containing %q", err, want)
			}
			if werr := tb.LogMetrics(map[string]float64{"loss": 1}, 0); werr == nil || werr.Error() != verr.Error() {
				t.Errorf("LogMetrics = %v, want Validate's error", werr)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("an invalid logger wrote %v", entries)
			}
		})
	}
}
