package data

import (
	"context"
	"reflect"
	"testing"
)

// TestZeroValuesAreTheDocumentedDefaults: each loader's zero-valued optional
// fields validate and batch exactly as the documented defaults written out.
func TestZeroValuesAreTheDocumentedDefaults(t *testing.T) {
	ds := numbered(7)
	tests := []struct {
		name           string
		zero, explicit Loader
	}{
		{"DataLoader BatchSize 0 means 1", &DataLoader{Dataset: ds}, &DataLoader{Dataset: ds, BatchSize: 1}},
		{"DataLoader Prefetch 0 means 2*max(1, Workers)", &DataLoader{Dataset: ds, BatchSize: 2, Workers: 2},
			&DataLoader{Dataset: ds, BatchSize: 2, Workers: 2, Prefetch: 4}},
		{"CombinedLoader Mode empty means MaxSizeCycle",
			&CombinedLoader{Loaders: []Loader{&DataLoader{Dataset: ds, BatchSize: 2}, &DataLoader{Dataset: numbered(3), BatchSize: 2}}},
			&CombinedLoader{Loaders: []Loader{&DataLoader{Dataset: ds, BatchSize: 2}, &DataLoader{Dataset: numbered(3), BatchSize: 2}}, Mode: MaxSizeCycle}},
		{"Sharded Uneven zero means PadRepeat", &Sharded{Loader: &DataLoader{Dataset: ds}, Rank: 1, Replicas: 2},
			&Sharded{Loader: &DataLoader{Dataset: ds, BatchSize: 1}, Rank: 1, Replicas: 2, Uneven: PadRepeat}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, l := range []Loader{tc.zero, tc.explicit} {
				if err := l.(interface{ Validate() error }).Validate(); err != nil {
					t.Fatalf("Validate: %v", err)
				}
			}
			if a, b := tc.zero.NumBatches(), tc.explicit.NumBatches(); a != b || a < 1 {
				t.Fatalf("NumBatches: zero value %d, documented default %d", a, b)
			}
			got, want := collect(t, tc.zero), collect(t, tc.explicit)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("batches differ:\nzero value %v\n   default %v", got, want)
			}
		})
	}
}

// collect returns the flat data of every batch of epoch 0.
func collect(t *testing.T, l Loader) [][]any {
	t.Helper()
	var out [][]any
	for b, err := range l.Batches(context.Background(), 0, 0) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append(flatOf(b), b.Size, b.DataloaderIdx))
	}
	return out
}
