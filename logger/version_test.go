package logger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionResolution(t *testing.T) {
	tests := []struct {
		name        string
		dirs        []string // created under SaveDir before NewCSV
		files       []string // regular files created under SaveDir
		cfg         CSVConfig
		wantVersion int
		wantDir     string // LogDir relative to SaveDir
	}{
		{"no root dir", nil, nil, CSVConfig{}, 0, "volt_logs/version_0"},
		{"empty root dir", []string{"volt_logs"}, nil, CSVConfig{}, 0, "volt_logs/version_0"},
		{"gap in versions", []string{"volt_logs/version_0", "volt_logs/version_3"}, nil, CSVConfig{}, 4, "volt_logs/version_4"},
		{"junk ignored",
			[]string{"volt_logs/version_1", "volt_logs/version_x", "volt_logs/version_", "volt_logs/other_7", "volt_logs/version_5_old"},
			[]string{"volt_logs/version_9"},
			CSVConfig{}, 2, "volt_logs/version_2"},
		{"custom name", []string{"exp/version_0", "volt_logs/version_5"}, nil, CSVConfig{Name: "exp"}, 1, "exp/version_1"},
		{"no name level", []string{"version_2"}, nil, CSVConfig{Name: "."}, 3, "version_3"},
		{"explicit version", []string{"volt_logs/version_7"}, nil, CSVConfig{Version: intPtr(2)}, 2, "volt_logs/version_2"},
		{"explicit version zero", []string{"volt_logs/version_7"}, nil, CSVConfig{Version: intPtr(0)}, 0, "volt_logs/version_0"},
		{"version name overrides", nil, nil, CSVConfig{Version: intPtr(3), VersionName: "run-a"}, -1, "volt_logs/run-a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mkdirs(t, root, tt.dirs...)
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tt.cfg.SaveDir = root
			l := newTestCSV(t, tt.cfg)
			if got := l.Version(); got != tt.wantVersion {
				t.Errorf("Version() = %d, want %d", got, tt.wantVersion)
			}
			if got, want := l.LogDir(), filepath.Join(root, tt.wantDir); got != want {
				t.Errorf("LogDir() = %q, want %q", got, want)
			}
		})
	}
}

func TestVersionScanErrorNamesPath(t *testing.T) {
	root := t.TempDir()
	blocker := filepath.Join(root, "volt_logs")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewCSV(CSVConfig{SaveDir: root})
	if err == nil || !strings.Contains(err.Error(), blocker) {
		t.Fatalf("NewCSV with a file at %s: error %v, want one naming the path", blocker, err)
	}
}

func TestParseVersionDir(t *testing.T) {
	tests := []struct {
		in     string
		want   int
		wantOK bool
	}{
		{"version_0", 0, true},
		{"version_12", 12, true},
		{"version_007", 7, true},
		{"version_", 0, false},
		{"version_-1", 0, false},
		{"version_1a", 0, false},
		{"Version_1", 0, false},
		{"version_99999999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseVersionDir(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("parseVersionDir(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}
