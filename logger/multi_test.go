package logger

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// recorder is a Logger that records calls and returns a fixed error.
type recorder struct {
	calls []string
	err   error
}

func (r *recorder) LogMetrics(map[string]float64, int64) error {
	r.calls = append(r.calls, "metrics")
	return r.err
}

func (r *recorder) LogHyperparams(map[string]any) error {
	r.calls = append(r.calls, "hparams")
	return r.err
}

func (r *recorder) Save() error {
	r.calls = append(r.calls, "save")
	return r.err
}

func (r *recorder) Finalize(status string) error {
	r.calls = append(r.calls, "finalize:"+status)
	return r.err
}

// dirRecorder is a recorder that also reports a directory.
type dirRecorder struct {
	recorder
	dir string
}

func (d *dirRecorder) LogDir() string { return d.dir }

func TestMultiFanOutAndErrors(t *testing.T) {
	errA, errB := errors.New("a failed"), errors.New("b failed")
	tests := []struct {
		name string
		errs []error
	}{
		{"no errors", []error{nil, nil, nil}},
		{"one error", []error{nil, errA, nil}},
		{"two errors", []error{errA, nil, errB}},
	}
	wantCalls := []string{"metrics", "hparams", "save", "finalize:success"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var recs []*recorder
			var loggers []Logger
			for _, e := range tt.errs {
				r := &recorder{err: e}
				recs = append(recs, r)
				loggers = append(loggers, r)
			}
			m := Multi(append(loggers, nil)...)
			results := []error{
				m.LogMetrics(map[string]float64{"x": 1}, 0),
				m.LogHyperparams(map[string]any{"lr": 1}),
				m.Save(),
				m.Finalize(StatusSuccess),
			}
			for i, r := range recs {
				if !reflect.DeepEqual(r.calls, wantCalls) {
					t.Errorf("logger %d calls = %v, want %v", i, r.calls, wantCalls)
				}
			}
			for _, err := range results {
				for _, e := range tt.errs {
					if e != nil && !errors.Is(err, e) {
						t.Errorf("error %v does not wrap %v", err, e)
					}
				}
				if want := errors.Join(tt.errs...) != nil; (err != nil) != want {
					t.Errorf("error = %v, want an error: %v", err, want)
				}
			}
		})
	}
}

func TestMultiDirer(t *testing.T) {
	tests := []struct {
		name    string
		loggers []Logger
		wantDir string
		wantOK  bool
	}{
		{"no loggers", nil, "", false},
		{"no direr", []Logger{&recorder{}}, "", false},
		{"first direr wins", []Logger{&recorder{}, &dirRecorder{dir: "/a"}, &dirRecorder{dir: "/b"}}, "/a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := Multi(tt.loggers...).(Direr)
			if ok != tt.wantOK {
				t.Fatalf("Multi(...) implements Direr = %v, want %v", ok, tt.wantOK)
			}
			if ok && d.LogDir() != tt.wantDir {
				t.Fatalf("LogDir() = %q, want %q", d.LogDir(), tt.wantDir)
			}
		})
	}
}

func TestMultiWithCSV(t *testing.T) {
	l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir()})
	m := Multi(&recorder{}, l)
	if d, ok := m.(Direr); !ok || d.LogDir() != l.LogDir() {
		t.Fatalf("Multi LogDir = %v (Direr %v), want %q", m, ok, l.LogDir())
	}
	if err := errors.Join(m.LogMetrics(map[string]float64{"a": 1}, 0), m.Finalize(StatusSuccess)); err != nil {
		t.Fatal(err)
	}
	if got := len(readCSV(t, filepath.Join(l.LogDir(), MetricsFileName))); got != 2 {
		t.Fatalf("metrics.csv records = %d, want 2", got)
	}
}
