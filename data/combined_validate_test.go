package data

import (
	"context"
	"strings"
	"testing"
)

func TestCombinedValidate(t *testing.T) {
	tests := []struct {
		name    string
		c       CombinedLoader
		wantErr []string // substrings of the error; nil for no error
	}{
		{"valid default", CombinedLoader{Loaders: loadersAB()}, nil},
		{"valid names", CombinedLoader{Loaders: loadersAB(), Names: []string{"a", "b"}, Mode: MaxSize}, nil},
		{"no loaders", CombinedLoader{Mode: MinSize},
			[]string{"data.CombinedLoader.Loaders: must hold at least one loader, got none"}},
		{"nil loader", CombinedLoader{Loaders: []Loader{rangeLoader(0, 5), nil}},
			[]string{"data.CombinedLoader.Loaders[1]: must not be nil"}},
		{"invalid loader", CombinedLoader{Loaders: []Loader{&DataLoader{Dataset: numbered(3), BatchSize: -1}}},
			[]string{"data.CombinedLoader.Loaders[0]: data.DataLoader.BatchSize: must be >= 1 (0 means 1), got -1"}},
		{"names length", CombinedLoader{Loaders: loadersAB(), Names: []string{"a"}},
			[]string{"data.CombinedLoader.Names:", "got 1 names for 2 loaders"}},
		{"duplicate name", CombinedLoader{Loaders: loadersAB(), Names: []string{"a", "a"}},
			[]string{`data.CombinedLoader.Names[1]: "a" duplicates Names[0]`}},
		{"empty name", CombinedLoader{Loaders: loadersAB(), Names: []string{"", "b"}},
			[]string{"data.CombinedLoader.Names[0]: must not be empty"}},
		{"unknown mode", CombinedLoader{Loaders: loadersAB(), Mode: "zip"},
			[]string{`data.CombinedLoader.Mode: unknown mode "zip"`,
				`"max_size_cycle", "max_size", "min_size", "sequential"`}},
		{"cycle with iterable", CombinedLoader{Loaders: []Loader{rangeLoader(0, 5), streamLoader(4)}, Mode: MaxSizeCycle},
			[]string{`data.CombinedLoader.Mode: "max_size_cycle" needs the length of every loader`, `Loaders[1] ("1")`}},
		{"default with iterable", CombinedLoader{Loaders: []Loader{streamLoader(4)}, Names: []string{"s"}},
			[]string{"needs the length of every loader", `Loaders[0] ("s")`}},
		{"max_size with iterable", CombinedLoader{Loaders: []Loader{rangeLoader(0, 5), streamLoader(4)}, Mode: MaxSize}, nil},
		{"min_size with iterable", CombinedLoader{Loaders: []Loader{rangeLoader(0, 5), streamLoader(4)}, Mode: MinSize}, nil},
		{"sequential with iterable", CombinedLoader{Loaders: []Loader{streamLoader(4), streamLoader(2)}, Mode: Sequential}, nil},
		{"cycle an empty loader", CombinedLoader{Loaders: []Loader{rangeLoader(0, 0), rangeLoader(0, 5)}},
			[]string{`"max_size_cycle" cannot cycle Loaders[0] ("0"): it has no batches while another loader has 3`}},
		{"cycle only empty loaders", CombinedLoader{Loaders: []Loader{rangeLoader(0, 0), rangeLoader(0, 0)}}, nil},
		{"every error", CombinedLoader{Loaders: []Loader{nil, nil}, Names: []string{"x", "x"}, Mode: "zip"},
			[]string{"Loaders[0]: must not be nil", "Loaders[1]: must not be nil", "Names[1]", "unknown mode"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %v\nwant it to contain %q", err, want)
				}
			}
			// Batches reports the same error, then stops.
			yields := 0
			for b, berr := range tc.c.Batches(context.Background(), 0, 0) {
				yields++
				if b != nil || berr == nil || berr.Error() != err.Error() {
					t.Errorf("Batches yielded (%v, %v), want (nil, %v)", b, berr, err)
				}
			}
			if yields != 1 {
				t.Errorf("Batches yielded %d times, want 1", yields)
			}
		})
	}
}

func TestCombinedNegativeSkip(t *testing.T) {
	for _, mode := range combineModes {
		t.Run(string(mode), func(t *testing.T) {
			c := &CombinedLoader{Loaders: loadersAB(), Mode: mode}
			for _, err := range c.Batches(context.Background(), 0, -1) {
				if err == nil || !strings.Contains(err.Error(), "skip must be >= 0, got -1") {
					t.Errorf("error = %v, want a skip error", err)
				}
			}
		})
	}
}
