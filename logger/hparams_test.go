package logger

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestCSVHyperparams(t *testing.T) {
	tests := []struct {
		name  string
		calls []map[string]any
		want  map[string]any
	}{
		{
			name:  "single call",
			calls: []map[string]any{{"lr": 0.001, "batch_size": 32, "name": "mlp"}},
			want:  map[string]any{"lr": 0.001, "batch_size": 32, "name": "mlp"},
		},
		{
			name: "merge keeps earlier keys and overrides repeated ones",
			calls: []map[string]any{
				{"lr": 0.1, "epochs": 3},
				{"lr": 0.01, "seed": 42},
			},
			want: map[string]any{"lr": 0.01, "epochs": 3, "seed": 42},
		},
		{
			name: "nested maps and lists; top-level merge replaces nested values",
			calls: []map[string]any{
				{"optimizer": map[string]any{"name": "adam", "betas": []any{0.9, 0.999}}},
				{"model": map[string]any{"layers": []any{128, 64}, "act": "relu"}, "flag": true},
				{"optimizer": map[string]any{"name": "sgd"}},
			},
			want: map[string]any{
				"optimizer": map[string]any{"name": "sgd"},
				"model":     map[string]any{"layers": []any{128, 64}, "act": "relu"},
				"flag":      true,
			},
		},
		{
			name:  "empty call writes empty mapping",
			calls: []map[string]any{{}},
			want:  map[string]any{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir()})
			for _, c := range tt.calls {
				if err := l.LogHyperparams(c); err != nil {
					t.Fatal(err)
				}
			}
			if got := readYAML(t, filepath.Join(l.LogDir(), HparamsFileName)); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("hparams.yaml = %#v, want %#v", got, tt.want)
			}
			assertNoTempFiles(t, l.LogDir())
		})
	}
}

// readYAML decodes a YAML mapping file.
func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatalf("parse %s: %v\n%s", path, err, data)
	}
	return got
}

func TestCSVHyperparamsCopiesInput(t *testing.T) {
	l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir()})
	nested := map[string]any{"units": 8}
	if err := l.LogHyperparams(map[string]any{"model": nested}); err != nil {
		t.Fatal(err)
	}
	nested["units"] = 999
	if err := l.LogHyperparams(map[string]any{"seed": 1}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": map[string]any{"units": 8}, "seed": 1}
	if got := readYAML(t, filepath.Join(l.LogDir(), HparamsFileName)); !reflect.DeepEqual(got, want) {
		t.Fatalf("hparams.yaml = %#v, want %#v", got, want)
	}
}

func TestCSVHyperparamsUnencodable(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		key    string
	}{
		{"func", map[string]any{"ok": 1, "callback": func() {}}, "callback"},
		{"nested channel", map[string]any{"sched": map[string]any{"ch": make(chan int)}}, "sched"},
		{"complex", map[string]any{"z": complex(1, 2)}, "z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir()})
			if err := l.LogHyperparams(map[string]any{"lr": 0.1}); err != nil {
				t.Fatal(err)
			}
			err := l.LogHyperparams(tt.params)
			if err == nil || !strings.Contains(err.Error(), `"`+tt.key+`"`) {
				t.Fatalf("LogHyperparams(%v) = %v, want error naming %q", tt.params, err, tt.key)
			}
			want := map[string]any{"lr": 0.1}
			if got := readYAML(t, filepath.Join(l.LogDir(), HparamsFileName)); !reflect.DeepEqual(got, want) {
				t.Fatalf("hparams.yaml after rejected call = %#v, want %#v", got, want)
			}
		})
	}
}
