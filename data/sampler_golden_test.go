package data

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// samplerGoldens is testdata/samplers/goldens.json, written by
// gen_sampler_goldens.py from torch 1.13 and Lightning 2.2.5.
type samplerGoldens struct {
	Cases []struct {
		Name, Kind string
		Seed       uint64
		Params     struct {
			N           int       `json:"n"`
			NumSamples  int       `json:"num_samples"`
			Replacement bool      `json:"replacement"`
			Weights     []float64 `json:"weights"`
			Indices     []int     `json:"indices"`
		}
		Epochs [][]int
	}
	Distributed []struct {
		Name      string
		Seed      uint64
		ShardSeed uint64 `json:"shard_seed"`
		DropLast  bool   `json:"drop_last"`
		Ranks     [][][]int
	}
}

func readSamplerGoldens(t *testing.T) samplerGoldens {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "samplers", "goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g samplerGoldens
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// goldenWeights are the weights of gen_sampler_goldens.py's WEIGHTS.
var goldenWeights = []float64{0.1, 2.0, 0.0, 1.5, 3.0, 0.25, 1.0, 0.7, 0.0, 5.0, 0.05, 1.25}

// TestSamplersMatchTorch: every sampler yields torch's indices for the
// same seed, epoch after epoch, computing each epoch on its own (as a run
// resumed in that epoch does).
func TestSamplersMatchTorch(t *testing.T) {
	g := readSamplerGoldens(t)
	if len(g.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var s Sampler
			n := c.Params.N
			switch c.Kind {
			case "random":
				s = RandomSampler{Replacement: c.Params.Replacement, NumSamples: c.Params.NumSamples}
			case "weighted":
				s, n = WeightedRandomSampler{Weights: c.Params.Weights, NumSamples: c.Params.NumSamples, WithoutReplacement: !c.Params.Replacement}, len(c.Params.Weights)
			case "subset":
				s, n = SubsetRandomSampler{Subset: c.Params.Indices}, 100
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			for epoch, want := range c.Epochs {
				got, err := s.Indices(n, epoch, c.Seed)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("epoch %d: %v\n want torch's %v", epoch, got, want)
				}
				if s.Len(n) != len(want) {
					t.Errorf("Len(%d) = %d, torch's len %d", n, s.Len(n), len(want))
				}
			}
		})
	}
}
