package logger

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionDirPin(t *testing.T) {
	tests := []struct {
		name       string
		dirs       []string
		in         VersionDir
		wantPath   string // relative to SaveDir
		wantNumber int
		wantErr    string
	}{
		{"defaults", nil, VersionDir{}, "volt_logs/version_0", 0, ""},
		{"next free", []string{"volt_logs/version_1"}, VersionDir{}, "volt_logs/version_2", 2, ""},
		{"no name level", []string{"version_0"}, VersionDir{Name: "."}, "version_1", 1, ""},
		{"explicit", []string{"volt_logs/version_1"}, VersionDir{Version: intPtr(0)}, "volt_logs/version_0", 0, ""},
		{"version name", nil, VersionDir{VersionName: "a", Version: intPtr(3)}, "volt_logs/a", -1, ""},
		{"negative", nil, VersionDir{Version: intPtr(-1)}, "", 0, "VersionDir.Version"},
		{"separator", nil, VersionDir{VersionName: "a/b"}, "", 0, "VersionDir.VersionName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mkdirs(t, root, tt.dirs...)
			tt.in.SaveDir = root
			got, err := tt.in.Pin()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Pin: error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, tt.wantPath); got.Path() != want {
				t.Errorf("Path() = %q, want %q", got.Path(), want)
			}
			if got.Number() != tt.wantNumber {
				t.Errorf("Number() = %d, want %d", got.Number(), tt.wantNumber)
			}
			// Pinned directories are stable: a new version_N appearing does
			// not move them, and pinning again changes nothing.
			mkdirs(t, root, filepath.Join(filepath.Dir(tt.wantPath), "version_9"))
			again, err := got.Pin()
			if err != nil || again.Path() != got.Path() {
				t.Errorf("re-Pin = %q, %v; want %q", again.Path(), err, got.Path())
			}
			csv := newTestCSV(t, CSVConfig{}.WithDir(got))
			if csv.LogDir() != got.Path() {
				t.Errorf("CSV logger with WithDir writes to %q, want %q", csv.LogDir(), got.Path())
			}
		})
	}
}

func TestVersionDirPinDoesNotAlias(t *testing.T) {
	v := 3
	d, err := VersionDir{SaveDir: t.TempDir(), Version: &v}.Pin()
	if err != nil {
		t.Fatal(err)
	}
	v = 8
	if d.Number() != 3 {
		t.Fatalf("Number() = %d after the caller changed its int, want 3", d.Number())
	}
}
