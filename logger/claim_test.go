package logger

import (
	"os"
	"path/filepath"
	"testing"
)

// dirLogger is a logger that reports its directory, as the tests build them.
type dirLogger interface {
	Logger
	Direr
}

// autoLoggers builds, for each file-writing logger of this package, one with
// the next free version under root.
var autoLoggers = []struct {
	name string
	file string
	new  func(root string) (dirLogger, error)
}{
	{"csv", MetricsFileName, func(root string) (dirLogger, error) { return NewCSV(CSVConfig{SaveDir: root, FlushEvery: 1}) }},
	{"jsonl", JSONLMetricsFileName, func(root string) (dirLogger, error) { return NewJSONL(JSONLConfig{SaveDir: root}) }},
}

// TestVersionTakenByAnotherProgramIsNotShared: a logger that chose
// version_0 when it was built, and finds that another program created
// version_0 before its first write, claims version_1 instead of writing
// into the other program's run.
func TestVersionTakenByAnotherProgramIsNotShared(t *testing.T) {
	for _, tt := range autoLoggers {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			l, err := tt.new(root)
			if err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(root, DefaultName, "version_0")
			mkdirs(t, root, filepath.Join(DefaultName, "version_0"))
			otherFile := filepath.Join(other, tt.file)
			if err := os.WriteFile(otherFile, []byte("the other program's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := l.LogMetrics(map[string]float64{"loss": 1}, 0); err != nil {
				t.Fatal(err)
			}
			if err := l.Finalize(StatusSuccess); err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(root, DefaultName, "version_1")
			if l.LogDir() != want {
				t.Errorf("LogDir() = %s, want %s (version_0 belongs to another program)", l.LogDir(), want)
			}
			if b, _ := os.ReadFile(otherFile); string(b) != "the other program's\n" {
				t.Errorf("the other program's %s was changed: %q", tt.file, b)
			}
			if _, err := os.Stat(filepath.Join(want, tt.file)); err != nil {
				t.Errorf("the logger's own file: %v", err)
			}
		})
	}
}

// TestLoggersOfOneProgramShareTheirClaimedVersion: loggers built one after
// the other for the same root chose the same version; when another program
// takes it first they move on together to one directory.
func TestLoggersOfOneProgramShareTheirClaimedVersion(t *testing.T) {
	root := t.TempDir()
	var loggers []dirLogger
	for _, tt := range autoLoggers {
		l, err := tt.new(root)
		if err != nil {
			t.Fatal(err)
		}
		loggers = append(loggers, l)
	}
	mkdirs(t, root, filepath.Join(DefaultName, "version_0"))
	want := filepath.Join(root, DefaultName, "version_1")
	for i, l := range loggers {
		if err := l.LogMetrics(map[string]float64{"loss": 1}, 0); err != nil {
			t.Fatal(err)
		}
		if err := l.Finalize(StatusSuccess); err != nil {
			t.Fatal(err)
		}
		if l.LogDir() != want {
			t.Errorf("%s logger: LogDir() = %s, want %s", autoLoggers[i].name, l.LogDir(), want)
		}
	}
}

// TestClaimKeepsGivenVersions: a Version or VersionName given explicitly is
// used as it is, existing or not.
func TestClaimKeepsGivenVersions(t *testing.T) {
	tests := []struct {
		name string
		dir  VersionDir
		want string
	}{
		{"existing version", VersionDir{Version: intPtr(0)}, "volt_logs/version_0"},
		{"new version", VersionDir{Version: intPtr(4)}, "volt_logs/version_4"},
		{"version name", VersionDir{VersionName: "run"}, "volt_logs/run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mkdirs(t, root, "volt_logs/version_0")
			tt.dir.SaveDir = root
			d, err := tt.dir.Pin()
			if err != nil {
				t.Fatal(err)
			}
			c, err := d.Claim()
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, tt.want); c.Path() != want {
				t.Errorf("Claim().Path() = %s, want %s", c.Path(), want)
			}
			if _, err := os.Stat(c.Path()); err != nil {
				t.Error(err)
			}
		})
	}
}
