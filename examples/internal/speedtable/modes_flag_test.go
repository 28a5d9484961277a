package main

import (
	"slices"
	"strings"
	"testing"
)

// TestBackendModes covers -modes: the default configurations without it,
// name=config pairs in order with it (a config may hold "=" itself), and
// an error that names the flag for each malformed value.
func TestBackendModes(t *testing.T) {
	tests := []struct {
		flag    string
		want    []backendMode
		wantErr string
	}{
		{flag: "", want: zooBackendModes},
		{flag: "bygraph=go:ops_by_graph;p1=go:ops_by_graph,parallelism=1",
			want: []backendMode{{"bygraph", "go:ops_by_graph"}, {"p1", "go:ops_by_graph,parallelism=1"}}},
		{flag: "a=go;b=go:ops_sequential;c=go:ops_parallel",
			want: []backendMode{{"a", "go"}, {"b", "go:ops_sequential"}, {"c", "go:ops_parallel"}}},
		{flag: "a=go", wantErr: "at least two"},
		{flag: "a=go;go:ops_sequential", wantErr: `"go:ops_sequential" is not name=config`},
		{flag: "a=go;=go", wantErr: "is not name=config"},
		{flag: "a=go;b=", wantErr: "is not name=config"},
		{flag: "a=go;a=go:ops_sequential", wantErr: `the name "a" is used twice`},
	}
	saved := *modesFlag
	defer func() { *modesFlag = saved }()
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			*modesFlag = tt.flag
			got, err := backendModes()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "-modes: ") {
					t.Fatalf("backendModes() = %v, %v; want an error about -modes containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("backendModes() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestProcsGuard: the benchmark's guard accepts the GOMAXPROCS it first
// saw, again and again, and refuses any other with the advice to run one
// -cpu value per process.
func TestProcsGuard(t *testing.T) {
	var g procsGuard
	for _, procs := range []int{2, 2, 2} {
		if err := g.check(procs); err != nil {
			t.Fatalf("check(%d) after 2: %v", procs, err)
		}
	}
	err := g.check(1)
	if err == nil || !strings.Contains(err.Error(), "GOMAXPROCS 1") || !strings.Contains(err.Error(), "at 2") ||
		!strings.Contains(err.Error(), "one -cpu value per process") {
		t.Errorf("check(1) after 2 = %v; want an error naming both and the advice", err)
	}
}
