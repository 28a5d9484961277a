package logger

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// newTestJSONL constructs a JSONLLogger in a temporary SaveDir.
func newTestJSONL(t *testing.T, cfg JSONLConfig) *JSONLLogger {
	t.Helper()
	if cfg.SaveDir == "" {
		cfg.SaveDir = t.TempDir()
	}
	l, err := NewJSONL(cfg)
	if err != nil {
		t.Fatalf("NewJSONL(%+v): %v", cfg, err)
	}
	return l
}

// readJSONLines decodes every line of path as a JSON object.
func readJSONLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestJSONLMetricsLines(t *testing.T) {
	tests := []struct {
		name    string
		metrics map[string]float64
		step    int64
		want    map[string]any
	}{
		{"plain", map[string]float64{"loss": 0.5, "acc": 1}, 3, map[string]any{"step": 3.0, "metrics": map[string]any{"loss": 0.5, "acc": 1.0}}},
		{"non-finite", map[string]float64{"a": math.NaN(), "b": math.Inf(1), "c": math.Inf(-1)}, 4,
			map[string]any{"step": 4.0, "metrics": map[string]any{"a": "nan", "b": "inf", "c": "-inf"}}},
		{"empty", map[string]float64{}, 5, map[string]any{"step": 5.0, "metrics": map[string]any{}}},
		{"tiny and negative step", map[string]float64{"lr": 1e-7}, -1, map[string]any{"step": -1.0, "metrics": map[string]any{"lr": 1e-7}}},
	}
	l := newTestJSONL(t, JSONLConfig{})
	for _, tt := range tests {
		if err := l.LogMetrics(tt.metrics, tt.step); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
	}
	path := filepath.Join(l.LogDir(), JSONLMetricsFileName)
	if info, err := os.Stat(path); err != nil || info.Size() != 0 {
		t.Fatalf("before Save: %s stat %v, want an empty file", path, err)
	}
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	got := readJSONLines(t, path)
	if len(got) != len(tests) {
		t.Fatalf("%d lines, want %d", len(got), len(tests))
	}
	for i, tt := range tests {
		if !reflect.DeepEqual(got[i], tt.want) {
			t.Errorf("%s: line %v, want %v", tt.name, got[i], tt.want)
		}
	}
}

func TestJSONLFileLifecycle(t *testing.T) {
	root := t.TempDir()
	cfg := JSONLConfig{SaveDir: root, Version: intPtr(0)}
	path := filepath.Join(root, DefaultName, "version_0", JSONLMetricsFileName)

	l := newTestJSONL(t, cfg)
	if err := l.Finalize(StatusSuccess); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.LogDir()); !os.IsNotExist(err) {
		t.Fatalf("log dir exists with nothing logged (stat err %v)", err)
	}

	// A file from an earlier run is replaced by the first write.
	mkdirs(t, root, filepath.Join(DefaultName, "version_0"))
	if err := os.WriteFile(path, []byte("{\"step\":99,\"metrics\":{}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.LogMetrics(map[string]float64{"a": 1}, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Finalize(StatusSuccess); err != nil {
		t.Fatal(err)
	}
	if err := l.Finalize(StatusSuccess); err != nil {
		t.Fatalf("second Finalize: %v", err)
	}
	// Logging after Finalize appends.
	if err := l.LogMetrics(map[string]float64{"a": 2}, 1); err != nil {
		t.Fatal(err)
	}
	if err := l.Finalize("bogus"); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("Finalize(bogus): error %v, want one naming the status", err)
	}
	var steps []float64
	for _, line := range readJSONLines(t, path) {
		steps = append(steps, line["step"].(float64))
	}
	if !reflect.DeepEqual(steps, []float64{0, 1}) {
		t.Fatalf("steps on disk %v, want [0 1]", steps)
	}
}

func TestJSONLHparams(t *testing.T) {
	l := newTestJSONL(t, JSONLConfig{})
	if err := l.LogHyperparams(map[string]any{"lr": 0.1, "opt": map[string]any{"name": "adam", "eps": math.Inf(1)}}); err != nil {
		t.Fatal(err)
	}
	if err := l.LogHyperparams(map[string]any{"lr": 0.2, "seed": 7}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(l.LogDir(), JSONLHparamsFileName))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("hparams.json: %v\n%s", err, data)
	}
	want := map[string]any{"lr": 0.2, "seed": 7.0, "opt": map[string]any{"name": "adam", "eps": "inf"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("hparams.json = %v, want %v", got, want)
	}
}

func TestJSONLErrors(t *testing.T) {
	tests := []struct {
		name    string
		act     func(l *JSONLLogger) error
		wantErr string
	}{
		{"empty metric name", func(l *JSONLLogger) error { return l.LogMetrics(map[string]float64{"": 1}, 0) }, JSONLMetricsFileName},
		{"unencodable hparam", func(l *JSONLLogger) error { return l.LogHyperparams(map[string]any{"fn": func() {}}) }, `"fn"`},
		{"non-finite in typed slice", func(l *JSONLLogger) error {
			return l.LogHyperparams(map[string]any{"w": []float64{math.NaN()}})
		}, `"w"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.act(newTestJSONL(t, JSONLConfig{}))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewJSONLValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     JSONLConfig
		wantErr string
	}{
		{"zero", JSONLConfig{}, ""},
		{"negative version", JSONLConfig{Version: intPtr(-1)}, "JSONLConfig.Version"},
		{"bad version name", JSONLConfig{VersionName: ".."}, "JSONLConfig.VersionName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.SaveDir = t.TempDir()
			_, err := NewJSONL(tt.cfg)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("NewJSONL: error %v, want %q", err, tt.wantErr)
			}
		})
	}
}
