package logger

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestNewCSVValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     CSVConfig
		wantErr string // substring; "" means success
	}{
		{"zero config", CSVConfig{}, ""},
		{"negative version", CSVConfig{Version: intPtr(-1)}, "CSVConfig.Version"},
		{"negative flush", CSVConfig{FlushEvery: -5}, "CSVConfig.FlushEvery"},
		{"version name with separator", CSVConfig{VersionName: "a/b"}, "CSVConfig.VersionName"},
		{"version name dotdot", CSVConfig{VersionName: ".."}, "CSVConfig.VersionName"},
		{"version name dot", CSVConfig{VersionName: "."}, "CSVConfig.VersionName"},
		{"negative version with version name", CSVConfig{Version: intPtr(-2), VersionName: "x"}, "CSVConfig.Version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.SaveDir = filepath.Join(t.TempDir(), tt.cfg.SaveDir)
			_, err := NewCSV(tt.cfg)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("NewCSV: unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("NewCSV: error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCSVConfigDefaults(t *testing.T) {
	got, err := CSVConfig{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := CSVConfig{SaveDir: ".", Name: DefaultName, FlushEvery: DefaultFlushEvery}
	if got.SaveDir != want.SaveDir || got.Name != want.Name || got.FlushEvery != want.FlushEvery {
		t.Fatalf("withDefaults() = %+v, want %+v", got, want)
	}
}
