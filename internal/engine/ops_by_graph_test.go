package engine

import (
	"strings"
	"testing"
)

// TestWithoutOpsByGraph: volt's own option is taken out of the
// configuration GoMLX sees, wherever it stands, and refused beside the
// modes it chooses between or on another backend.
func TestWithoutOpsByGraph(t *testing.T) {
	for _, tc := range []struct {
		config, gomlx string
		byGraph       bool
		err           string
	}{
		{config: "go", gomlx: "go"},
		{config: "go:ops_sequential", gomlx: "go:ops_sequential"},
		{config: "go:ops_by_graph", gomlx: "go", byGraph: true},
		{config: "go:parallelism=1,ops_by_graph", gomlx: "go:parallelism=1", byGraph: true},
		{config: "go:ops_by_graph,parallelism=1", gomlx: "go:parallelism=1", byGraph: true},
		{config: "go:ops_by_graph,ops_sequential", err: "name one of the three"},
		{config: "go:ops_parallel,ops_by_graph", err: "name one of the three"},
		{config: "xla:cuda,ops_by_graph", err: "go backend only"},
	} {
		t.Run(tc.config, func(t *testing.T) {
			gomlx, byGraph, err := withoutOpsByGraph(tc.config)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.config) {
					t.Fatalf("error %v, want one naming %q and saying %q", err, tc.config, tc.err)
				}
				return
			}
			if err != nil || gomlx != tc.gomlx || byGraph != tc.byGraph {
				t.Errorf("got %q, %v, %v; want %q, %v", gomlx, byGraph, err, tc.gomlx, tc.byGraph)
			}
		})
	}
}

// TestDefaultBackendChoosesPerGraph: volt's default backend is the Go
// backend with the mode chosen per graph, and a configuration that asks
// for two modes does not start.
func TestDefaultBackendChoosesPerGraph(t *testing.T) {
	t.Setenv(BackendEnvVar, "")
	if got := ResolveBackendConfig(""); got != "go:ops_by_graph" {
		t.Errorf("default backend %q, want go:ops_by_graph", got)
	}
	if _, err := Backend(""); err != nil {
		t.Fatal(err)
	}
	if _, err := Backend("go:ops_sequential,ops_by_graph"); err == nil {
		t.Error("a backend with two modes started")
	}
}

// TestUnknownGoOptionNamesOpsByGraph: GoMLX's error for an unknown option
// of the Go backend lists its own options; volt's adds ops_by_graph, which
// GoMLX does not know, so that a misspelt one finds it.
func TestUnknownGoOptionNamesOpsByGraph(t *testing.T) {
	for _, config := range []string{"go:ops_by_grahp", "go:ops_by_graph,executors=3"} {
		_, err := Backend(config)
		if err == nil {
			t.Fatalf("%s: started", config)
		}
		for _, want := range []string{config, "unknown configuration option", "volt adds ops_by_graph", `"go:ops_by_graph"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", config, err, want)
			}
		}
	}
	if _, err := Backend("go:num_executors=x"); err == nil || strings.Contains(err.Error(), "volt adds") {
		t.Errorf("a bad value (not an unknown option) gave %v; want GoMLX's error alone", err)
	}
}
